package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// envRef is a ${VAR} reference in implementor.cli.env.
var envRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// validateCLI checks the rules between the implementor.cli keys, recording
// problems through validate's at and atFirstSet.
func validateCLI(c *Config, at func(key, msg, acc string), atFirstSet func(keys []string, msg, acc string)) {
	cli := c.Implementor.CLI
	if c.Implementor.Backend == BackendCLI && cli.Preset == "" && len(cli.Command) == 0 {
		atFirstSet([]string{"implementor.backend", "implementor.cli.preset", "implementor.cli.command"},
			"backend cli needs implementor.cli.preset or implementor.cli.command",
			"a preset ("+joinAccepted(CLIPresets)+") or a command list")
	}
	for name, v := range cli.Env {
		key := "implementor.cli.env." + name
		if msg := checkEnvName(name); msg != "" {
			at(key, msg, "a variable name")
		}
		for _, m := range envRef.FindAllStringSubmatch(v, -1) {
			if msg := checkEnvName(m[1]); msg != "" {
				at(key, fmt.Sprintf("${%s}: %s", m[1], msg), "${NAME} with NAME a variable of lemmings' environment")
			}
		}
	}
}

// ExpandCLIEnv returns implementor.cli.env with each ${VAR} replaced by
// lookup(VAR); a variable lookup does not know is an error naming the key.
func ExpandCLIEnv(env map[string]string, lookup func(string) (string, bool)) (map[string]string, error) {
	out := make(map[string]string, len(env))
	var missing []string
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out[name] = envRef.ReplaceAllStringFunc(env[name], func(ref string) string {
			v := ref[2 : len(ref)-1]
			val, ok := lookup(v)
			if !ok {
				missing = append(missing, fmt.Sprintf("implementor.cli.env.%s: ${%s} is not set in lemmings' environment (set it, or remove the reference)", name, v))
			}
			return val
		})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(missing, "\n"))
	}
	return out, nil
}

// WithImplementor returns a copy of c whose Implementor is the one named as
// lemmings eval's --implementor names it: "lemmings", "cli" (implementor.cli
// as configured) or "cli:<preset>".
func (c *Config) WithImplementor(name string) (*Config, error) {
	out := *c
	switch {
	case name == "" || name == BackendLemmings:
		out.Implementor.Backend = BackendLemmings
	case name == BackendCLI:
		if c.Implementor.CLI.Preset == "" && len(c.Implementor.CLI.Command) == 0 {
			return nil, fmt.Errorf("implementor %q: set implementor.cli.preset or implementor.cli.command, or name a preset (cli:%s)", name, strings.Join(CLIPresets, ", cli:"))
		}
		out.Implementor.Backend = BackendCLI
	case strings.HasPrefix(name, BackendCLI+":"):
		preset := strings.TrimPrefix(name, BackendCLI+":")
		if msg := oneOf(CLIPresets...)(preset); msg != "" {
			return nil, fmt.Errorf("implementor %q: %s (accepted: cli:%s)", name, msg, strings.Join(CLIPresets, ", cli:"))
		}
		out.Implementor.Backend = BackendCLI
		out.Implementor.CLI.Preset = preset
		out.Implementor.CLI.Command = nil // the preset's own command line
	default:
		return nil, fmt.Errorf("implementor %q: accepted: lemmings, cli, cli:<preset> (%s)", name, strings.Join(CLIPresets, ", "))
	}
	return &out, nil
}
