package config

import (
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
)

// Secrets lists the literal secrets written in the configuration, by key, for
// the redactor to learn (a key echoed by a coding CLI must never reach
// events, prompts or checkpoints): API keys, passwords in URLs, and the
// values of implementor.cli.env, literal or expanded from ${VAR}, whose
// variable is named like a secret (or whose value is a credential the
// redactor's rules would not know as one).
func (c *Config) Secrets() map[string]string {
	out := map[string]string{}
	add := func(key, v string) {
		if v = strings.TrimSpace(v); v != "" {
			out[key] = v
		}
	}
	add("openrouter.api_key", c.OpenRouter.APIKey)
	for _, name := range slices.Sorted(maps.Keys(c.Roles)) {
		r := c.Roles[name]
		add("roles."+name+".api_key", r.APIKey)
		add("roles."+name+".base_url", urlPassword(r.BaseURL))
	}
	add("store", urlPassword(c.Store))
	add("cluster.remote", urlPassword(c.Cluster.Remote))
	add("tracing.endpoint", urlPassword(c.Tracing.Endpoint))
	add("ollama.host", urlPassword(c.Ollama.Host))
	add("openrouter.base_url", urlPassword(c.OpenRouter.BaseURL))
	if env, err := ExpandCLIEnv(c.Implementor.CLI.Env, os.LookupEnv); err == nil {
		for name, v := range env {
			if secretEnvName(name) || strings.Contains(c.Implementor.CLI.Env[name], "${") {
				add("implementor.cli.env."+name, v)
			}
		}
	}
	return out
}

// urlPassword is the password of a URL with credentials, or "".
func urlPassword(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// secretEnvName reports whether a variable's name says it holds a secret
// (OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD…).
func secretEnvName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PWD", "PASSPHRASE", "CREDENTIAL", "AUTH"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
