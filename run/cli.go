package run

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/codingcli"
	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
)

// cliSettingsFrom reads the coding CLI backend from the configuration (nil:
// the implementor writes the code itself).
func cliSettingsFrom(c *config.Config) *implementor.CLISettings {
	if c.Implementor.Backend != config.BackendCLI {
		return nil
	}
	cli := c.Implementor.CLI
	return &implementor.CLISettings{Preset: cli.Preset, Command: slices.Clone(cli.Command), Format: cli.Format, Model: cli.Model,
		Timeout: cli.Timeout, Env: maps.Clone(cli.Env), PassEnv: slices.Clone(cli.PassEnv), BudgetUSD: cli.BudgetUSD}
}

// CheckCLI says whether the configured coding CLI can run: a run fails fast
// with its advice before any model call. nil when the backend is lemmings.
func CheckCLI(c *config.Config) error {
	cli := cliSettingsFrom(c)
	if cli == nil {
		return nil
	}
	p, _, err := cli.Worker(os.LookupEnv)
	if err != nil {
		return err
	}
	if err := p.Check(); err != nil {
		fix := p.Install
		if p.Login != "" {
			fix += "; then " + p.Login
		}
		return &implementor.CLIError{Name: p.Name, Cause: strings.TrimPrefix(err.Error(), codingcli.ErrNotFound.Error()+": "), Fix: fix}
	}
	return nil
}

// CLILoginWarning says, when the configured CLI sees none of the variables
// its preset reads its key or server from, that it may not be logged in
// ("" otherwise). Whether a CLI that logs in through its own files (its
// home folder) is logged in shows only when it runs: an attempt then ends
// with its error.
func CLILoginWarning(c *config.Config) string {
	cli := cliSettingsFrom(c)
	if cli == nil {
		return ""
	}
	p, env, err := cli.Worker(os.LookupEnv)
	if err != nil || p.Login == "" {
		return ""
	}
	var keys []string
	for _, k := range p.Env {
		if strings.HasSuffix(k, "_HOME") || slices.Contains(cli.PassEnv, k) {
			continue // a folder, not a key; or one the user passes on purpose
		}
		keys = append(keys, k)
		if _, ok := env[k]; ok {
			return ""
		}
		if v, ok := os.LookupEnv(k); ok && v != "" {
			return ""
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return fmt.Sprintf("coding CLI %s sees none of %s: unless it is logged in through its own files, its runs will fail. To log in: %s", p.Name, strings.Join(keys, ", "), p.Login)
}
