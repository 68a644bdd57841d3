package config

import (
	"slices"
	"sort"
	"strings"
)

// Environment variables, applied in this order (a later one wins):
//
//	OLLAMA_HOST, OPENROUTER_API_KEY   the variables the providers' own tools read
//	LEMMINGS_<ROLE>_MODEL, LEMMINGS_OFFLINE   shortcuts
//	LEMMINGS_<SECTION>__<KEY>[__<KEY>…]       any key: segments joined by "__"
//
// An empty variable counts as unset.

const envPrefix = "LEMMINGS_"

// envShortcuts maps the short names people type to their keys.
func envShortcuts() map[string]string {
	return map[string]string{
		"LEMMINGS_PRIMARY_MODEL":    "roles.primary.model",
		"LEMMINGS_SUMMARIZER_MODEL": "roles.summarizer.model",
		"LEMMINGS_SUPERVISOR_MODEL": "roles.supervisor.model",
		"LEMMINGS_EMBEDDING_MODEL":  "roles.embedding.model",
		"LEMMINGS_OFFLINE":          "offline",
	}
}

// providerEnv are the variables named after the providers' own conventions.
var providerEnv = [...]struct{ name, key string }{
	{"OLLAMA_HOST", "ollama.host"},
	{"OPENROUTER_API_KEY", "openrouter.api_key"},
}

// EnvName returns the generic environment variable for a dotted key:
// "roles.primary.num_ctx" → "LEMMINGS_ROLES__PRIMARY__NUM_CTX".
func EnvName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// envKey maps a LEMMINGS_ variable to its dotted key; ok is false when the
// name cannot be read as one.
func envKey(name string) (string, bool) {
	if k, ok := envShortcuts()[name]; ok {
		return k, true
	}
	rest := strings.TrimPrefix(name, envPrefix)
	if rest == "" || rest == name {
		return "", false
	}
	segs := strings.Split(rest, "__")
	for i, s := range segs {
		if s == "" {
			return "", false
		}
		segs[i] = strings.ToLower(s)
	}
	return strings.Join(segs, "."), true
}

// knownEnvNames lists every LEMMINGS_ variable that names a key of the
// schema, for when the environment cannot be listed (Env given without Environ).
func knownEnvNames() []string {
	var names []string
	for n := range envShortcuts() {
		names = append(names, n)
	}
	d := Default()
	for _, sk := range schemaKeys() {
		if strings.HasPrefix(sk.pattern, "gates.") {
			continue // a gate is set with the whole list
		}
		for _, key := range expandPattern(d, sk.pattern) {
			names = append(names, EnvName(key))
		}
	}
	sort.Strings(names)
	return slices.Compact(names) // LEMMINGS_OFFLINE is both a shortcut and generic
}

// expandPattern replaces each "*" of a pattern with the keys the map at that
// point accepts.
func expandPattern(c *Config, pattern string) []string {
	i := strings.Index(pattern, "*")
	if i < 0 {
		return []string{pattern}
	}
	parent := strings.TrimSuffix(pattern[:i], ".")
	keys := acceptedMapKeys(parent)
	var out []string
	for _, k := range keys {
		out = append(out, expandPattern(c, pattern[:i]+k+pattern[i+1:])...)
	}
	return out
}

// acceptedMapKeys returns the accepted keys of the fixed-key map at key.
func acceptedMapKeys(key string) []string {
	for _, sk := range schemaKeys() {
		if sk.pattern == key && sk.container {
			return sk.field.keys
		}
	}
	return nil
}

// envEntry is one variable to apply.
type envEntry struct{ name, value, key string }

// environment returns the variables to apply, in order, and the names of
// LEMMINGS_ variables that cannot be read as a key.
func environment(get func(string) string, environ func() []string) (entries []envEntry, unreadable []string) {
	for _, p := range providerEnv {
		if v := get(p.name); v != "" {
			entries = append(entries, envEntry{p.name, v, p.key})
		}
	}
	var names []string
	if environ != nil {
		seen := map[string]bool{}
		for _, kv := range environ() {
			name, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(name, envPrefix) && !seen[name] && !toolingEnv(name) {
				seen[name] = true
				names = append(names, name)
			}
		}
	} else {
		names = knownEnvNames()
	}
	shortcuts := envShortcuts()
	sort.Slice(names, func(i, j int) bool {
		_, si := shortcuts[names[i]]
		_, sj := shortcuts[names[j]]
		if si != sj {
			return si // shortcuts first, so the generic form wins
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		v := get(name)
		if v == "" {
			continue
		}
		key, ok := envKey(name)
		if !ok {
			unreadable = append(unreadable, name)
			continue
		}
		entries = append(entries, envEntry{name, v, key})
	}
	return entries, unreadable
}

// toolingEnv names LEMMINGS_ variables that belong to lemmings' own test
// tooling, not to the configuration: they are neither keys nor problems.
func toolingEnv(name string) bool {
	switch name {
	case "LEMMINGS_REAL_OLLAMA", "LEMMINGS_OLLAMA_BIN", "LEMMINGS_E2E_RACE", "LEMMINGS_BROWSER", "LEMMINGS_SCREENSHOTS",
		"LEMMINGS_MODELS_DIR", "LEMMINGS_TRAINED_FULL", "LEMMINGS_TRAINED_SEEDS":
		return true
	}
	return strings.HasPrefix(name, "LEMMINGS_TEST_")
}
