package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/eval"
	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/run"
)

// cliUsable fails a run that would use a coding CLI that cannot run: exit 2
// when the configuration must change, 1 when the CLI must be installed or
// set up (as with Ollama down).
func cliUsable(cfg *config.Config) error {
	err := run.CheckCLI(cfg)
	var ce *nodes.CLIError
	if errors.As(err, &ce) {
		code := exitFailed
		if ce.Config {
			code = exitUsage
		}
		return &exitError{code: code, err: err}
	}
	return err
}

// warnCLILogin prints the login warning before a run with a coding CLI.
func (a *app) warnCLILogin(cfg *config.Config) {
	if w := run.CLILoginWarning(cfg); w != "" {
		fmt.Fprintln(a.stderr, "warning:", w)
	}
}

// cliChecks are the doctor's lines on the Implementor's backend.
func cliChecks(cfg *config.Config) []check {
	if cfg.Implementor.Backend != config.BackendCLI {
		return []check{{Name: "implementor", Status: "ok", Detail: "lemmings' own loop on the primary model (implementor.backend: lemmings)"}}
	}
	err := run.CheckCLI(cfg)
	var ce *nodes.CLIError
	if errors.As(err, &ce) {
		return []check{{Name: "coding CLI", Status: "fail", Detail: ce.Name + ": " + ce.Cause, Fix: ce.Fix}}
	}
	if err != nil {
		return []check{{Name: "coding CLI", Status: "fail", Detail: err.Error()}}
	}
	s := run.SettingsFrom(cfg).CLI
	p, _, _ := s.Worker(os.LookupEnv)
	where, _ := exec.LookPath(p.Args[0])
	detail := p.Name + " at " + where + " (" + string(p.Format) + ")"
	if s.Model != "" {
		detail += ", model " + s.Model
	}
	out := []check{{Name: "coding CLI", Status: "ok", Detail: detail}}
	if w := run.CLILoginWarning(cfg); w != "" {
		out = append(out, check{Name: "coding CLI login", Status: "warn", Detail: w, Fix: p.Login})
	}
	return out
}

// cliProgress shows the coding CLI's work: its tool calls on the live line,
// one line per CLI run with what it spent.
func (p *progress) cliProgress(data events.Payload) {
	switch d := data.(type) {
	case *events.CLIStart:
		p.cliTools = 0
	case *events.CLIEvent:
		if d.EventKind == "tool_call" {
			p.cliTools++
		}
	case *events.CLIRun:
		end := "done"
		switch {
		case d.TimedOut:
			end = "TIMED OUT"
		case d.ExitCode != 0:
			end = fmt.Sprintf("EXIT %v", d.ExitCode)
		case d.Failed != "":
			end = "ERROR"
		}
		p.printf("%s   cli %v %s: %v tool calls, %v/%v tokens, $%.4f, %s", p.elapsed(), d.CLI, end, d.ToolCalls,
			d.InputTokens, d.OutputTokens, d.CostUSD, time.Duration(d.DurationMS)*time.Millisecond)
	case *events.CLIOutside:
		p.printf("%s   cli changed things outside the work tree: %v", p.elapsed(), d.Changes)
	case *events.CLICommitsDropped:
		p.printf("%s   cli made %v commit(s) of its own: kept the changes, not the commits", p.elapsed(), d.Commits)
	}
}

// evalCLISolver has a coding CLI implement the exercises (--implementor cli
// or cli:PRESET); the model recorded is the CLI's.
func evalCLISolver(name string, cfg *config.Config) (eval.Solver, string, error) {
	withCLI, err := cfg.WithImplementor(name)
	if err != nil {
		return nil, "", usageErr("--implementor: %v", err)
	}
	if err := cliUsable(withCLI); err != nil {
		return nil, "", err
	}
	s := run.SettingsFrom(withCLI).CLI
	model := s.Model
	if model == "" {
		model = "default"
	}
	return &eval.Lemmings{Config: cfg, Implementor: name}, model, nil
}
