package run

import (
	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/workspace"
)

// SettingsFrom maps the configuration onto the workflow's settings
// (nodes.SettingsFrom), with the primary's reply budget and the coding CLI.
func SettingsFrom(c *config.Config) nodes.Settings {
	s := nodes.SettingsFrom(c)
	s.ReplyTokens = c.Roles[config.RolePrimary].MaxTokens
	if s.CLI = cliSettingsFrom(c); s.CLI != nil {
		s.CLI.DataDir = DataDir
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
