package run

import (
	"maps"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/workspace"
)

// SettingsFrom maps the configuration onto the workflow's settings.
func SettingsFrom(c *config.Config) nodes.Settings {
	s := nodes.DefaultSettings()
	l := c.Limits
	s.MaxTasks, s.MaxRetries, s.MaxActions, s.MaxWallTime = l.MaxTasks, l.MaxRetries, l.MaxActions, l.MaxWallTime
	s.ReviewInterval, s.PolishTasks = l.ReviewInterval, l.PolishTasks
	s.DirectiveMaxAge, s.MaxCleanupDirectives = l.DirectiveMaxAge, l.MaxCleanupDirectives
	if l.MaxConsecutiveFailures > 0 {
		s.MaxConsecutiveFailures = l.MaxConsecutiveFailures
	}
	s.TokenBudgets = maps.Clone(l.TokenBudgets)
	s.GateOutputBytes = l.GateOutputBytes
	s.FixRounds = l.FixRounds
	if p := c.Roles[config.RolePrimary].EditProtocol; p != "" {
		s.EditProtocol = p
	}
	s.ReplyTokens = c.Roles[config.RolePrimary].MaxTokens
	if c.Implementor.Samples > 0 {
		s.Samples = c.Implementor.Samples
	}
	s.Tasks = nodes.TaskLimits{MaxTargetFiles: c.Tasks.MaxTargetFiles, MaxInstructionChars: c.Tasks.MaxInstructionChars, SplitAfter: c.Tasks.SplitAfter}
	s.QA = nodes.QASettings{RequireQuotes: c.QA.RequireQuotes, Disputed: c.QA.Disputed}
	s.Pipeline = nodes.PipelineSettings{Mode: c.Pipeline.Mode, QuickAttempts: c.Pipeline.QuickAttempts, Summaries: c.Pipeline.Summaries}
	s.ArchitectAfter = c.Escalation.ArchitectAfter
	if s.CLI = cliSettingsFrom(c); s.CLI != nil {
		s.CLI.DataDir = DataDir
	}
	s.KnowledgeDir, s.KnowledgeBudget, s.PromoteAfter = c.Knowledge.Dir, c.Knowledge.BudgetTokens, c.Knowledge.PromoteAfter

	sup := c.Supervisors
	s.Supervisors = nodes.SupervisorSettings{
		Enabled:              sup.Enabled && !c.Offline,
		Blocking:             sup.Mode == "blocking",
		BudgetUSD:            sup.BudgetUSD,
		InputTokens:          sup.InputTokens,
		UrgencyThreshold:     sup.UrgencyThreshold,
		WeightQAFailure:      sup.UrgencyWeights.QAFailure,
		WeightTaskAbort:      sup.UrgencyWeights.TaskAbort,
		WeightChurn:          sup.UrgencyWeights.Churn,
		WeightMinorDrift:     sup.UrgencyWeights.MinorDrift,
		CodeStyle:            nodes.SupervisorKind{Enabled: sup.CodeStyle.Enabled, Interval: sup.CodeStyle.Interval},
		Design:               nodes.SupervisorKind{Enabled: sup.Design.Enabled},
		Internaliser:         nodes.SupervisorKind{Enabled: sup.Internaliser.Enabled, Interval: sup.Internaliser.Interval},
		ConvergenceThreshold: sup.Convergence.Threshold,
		MaxInterval:          sup.Convergence.MaxInterval,
		Deny:                 append([]string(nil), sup.Deny...),
	}
	return s
}

// RouterConfigFrom maps config roles to llm role specs. Without supervisors
// the cloud role is left out, so no request can leave for the cloud.
func RouterConfigFrom(c *config.Config, supervisors bool) llm.RouterConfig {
	rc := llm.RouterConfig{
		Roles:            map[string]llm.RoleSpec{},
		LocalConcurrency: c.Concurrency.Local,
		CloudConcurrency: c.Concurrency.Cloud,
		Retry:            llm.RetryPolicy{MaxAttempts: c.Retry.MaxAttempts, InitialBackoff: c.Retry.InitialBackoff, MaxBackoff: c.Retry.MaxBackoff},
		AppName:          c.OpenRouter.AppName,
		AppURL:           c.OpenRouter.AppURL,
	}
	for _, name := range config.RoleNames() {
		if name == config.RoleSupervisor && (!supervisors || c.Offline) {
			continue
		}
		if name == config.RolePlanner && !ownPlanner(c, supervisors) {
			continue // the primary plans
		}
		r, err := c.ResolvedRole(name)
		if err != nil {
			continue
		}
		if c.Offline && r.Provider != config.ProviderOllama {
			continue // offline: nothing but the local Ollama
		}
		rc.Roles[name] = llm.RoleSpec{
			Provider: r.Provider, Model: r.Model, BaseURL: r.BaseURL, APIKey: r.APIKey,
			NumCtx: r.NumCtx, MaxNumCtx: r.MaxNumCtx, MaxTokens: r.MaxTokens, Temperature: r.Temperature,
			Timeout: r.Timeout, KeepAlive: r.KeepAlive, Options: r.Options,
		}
	}
	return rc
}

// GatesFrom returns the configured gates, or those detected in dir.
func GatesFrom(c *config.Config, dir string) []workspace.Gate {
	if len(c.Gates) == 0 {
		return workspace.DetectGates(dir)
	}
	out := make([]workspace.Gate, 0, len(c.Gates))
	for _, g := range c.Gates {
		out = append(out, workspace.Gate{Name: g.Name, Command: g.Command, Timeout: g.Timeout, Network: g.Network})
	}
	return out
}
