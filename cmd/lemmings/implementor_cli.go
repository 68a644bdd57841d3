package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/eval"
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
func (p *progress) cliProgress(name string, data map[string]any) {
	switch name {
	case "cli_start":
		p.cliTools = 0
	case "cli_event":
		if data["kind"] == "tool_call" {
			p.cliTools++
		}
	case "cli_run":
		end := "done"
		switch {
		case data["timed_out"] == true:
			end = "TIMED OUT"
		case data["exit_code"] != float64(0):
			end = fmt.Sprintf("EXIT %v", data["exit_code"])
		case data["failed"] != nil:
			end = "ERROR"
		}
		p.printf("%s   cli %v %s: %v tool calls, %v/%v tokens, $%.4f, %s", p.elapsed(), data["cli"], end, data["tool_calls"],
			data["input_tokens"], data["output_tokens"], data["cost_usd"], time.Duration(toFloat(data["duration_ms"]))*time.Millisecond)
	case "cli_outside":
		p.printf("%s   cli changed things outside the work tree: %v", p.elapsed(), data["changes"])
	case "cli_commits_dropped":
		p.printf("%s   cli made %v commit(s) of its own: kept the changes, not the commits", p.elapsed(), data["commits"])
	}
}

func toFloat(v any) float64 {
	f, _ := v.(float64)
	return f
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
