package config

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/lemmings-dev/lemmings/internal/gitsafe"
)

// warnings finds what is allowed but worth telling: secrets in a file that
// may be committed, supervisors that will skip for want of a key.
func warnings(c *Config, s *Sources, opts LoadOptions, projectPath, projectShown string) []Problem {
	var out []Problem
	if projectPath != "" {
		var keys []string
		for _, k := range append([]string{"openrouter.api_key"}, expandPattern(c, "roles.*.api_key")...) {
			if o := s.lookup(k); o.layer == layerProject && secretValue(c, k) != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			ignored, err := gitIgnored(opts, projectPath)
			if err != nil || !ignored {
				for _, k := range keys {
					o := s.lookup(k)
					out = append(out, Problem{File: o.file, Line: o.line, Key: k,
						Message: "an API key written in " + projectShown + ", which git does not ignore: a commit would publish it; set " + keyEnvName(k) + " or use the user file instead"})
				}
			}
		}
	}
	if c.Supervisors.Enabled && c.Supervisors.BudgetUSD > 0 {
		if r, err := c.ResolvedRole(RoleSupervisor); err == nil && r.Provider == ProviderOpenRouter && r.APIKey == "" {
			out = append(out, Problem{Key: "openrouter.api_key", Message: NoSupervisorKeyMessage})
		}
	}
	return out
}

// NoSupervisorKeyMessage warns that supervisors will be skipped for want of
// a key. Only commands that run supervisors show it (Problem.SupervisorsOnly).
const NoSupervisorKeyMessage = "supervisors are enabled but no OpenRouter key is set: they will be skipped " +
	"(set OPENROUTER_API_KEY, or turn them off with --no-supervisors or supervisors.enabled: false)"

// SupervisorsOnly reports whether a warning concerns only commands that run
// supervisors (run, resume): others need not repeat it.
func (p Problem) SupervisorsOnly() bool { return p.Message == NoSupervisorKeyMessage }

// keyEnvName is the variable that can hold the key instead of a file.
func keyEnvName(key string) string {
	if key == "openrouter.api_key" {
		return "OPENROUTER_API_KEY"
	}
	return EnvName(key)
}

func secretValue(c *Config, key string) string {
	if key == "openrouter.api_key" {
		return c.OpenRouter.APIKey
	}
	for name, r := range c.Roles {
		if key == "roles."+name+".api_key" {
			return r.APIKey
		}
	}
	return ""
}

func gitIgnored(opts LoadOptions, path string) (bool, error) {
	if opts.GitIgnored != nil {
		return opts.GitIgnored(path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := gitsafe.Command(ctx, opts.RepoRoot, "check-ignore", "-q", "--", filepath.ToSlash(mustRel(opts.RepoRoot, path)))
	err := cmd.Run()
	if err == nil {
		return true, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}

func mustRel(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}
