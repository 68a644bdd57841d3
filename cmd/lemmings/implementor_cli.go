package main

import (
	"errors"
	"fmt"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/eval"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/run"
)

// cliUsable fails a run that would use a coding CLI that cannot run: exit 2
// when the configuration must change, 1 when the CLI must be installed or
// set up (as with Ollama down).
func cliUsable(cfg *config.Config) error {
	err := run.CheckCLI(cfg)
	var ce *implementor.CLIError
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
