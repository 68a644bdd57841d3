package config

import "testing"

func TestDefaultDenyPatterns(t *testing.T) {
	t.Parallel()
	s := Default().Supervisors
	for path, want := range map[string]bool{
		".env":                     true,
		"services/api/.env":        true,
		".env.production":          true,
		"certs/server.pem":         true,
		"deploy/tls.key":           true,
		"home/.ssh/id_rsa":         true,
		"id_rsa.pub":               true,
		"id_ed25519":               true,
		"store.p12":                true,
		"store.pfx":                true,
		"secrets":                  true,
		"secrets/prod/db.yaml":     true,
		"credentials.json":         true,
		"credentials/gcp.json":     true,
		"config/secrets/x":         false, // "secrets/**" is anchored at the root
		"main.go":                  false,
		"docs/environment.md":      false,
		"keys.go":                  false,
		"internal/key/key.go":      false,
		"":                         false,
		"./.env":                   true,
		`windows\style\server.pem`: true,
	} {
		if got := s.Denies(path); got != want {
			t.Errorf("Denies(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestDenyDoubleStarSpansDirectories(t *testing.T) {
	t.Parallel()
	s := Supervisors{Deny: []string{"**/private/*.txt", "build/**/cache"}}
	for path, want := range map[string]bool{
		"private/a.txt":             true,
		"x/y/private/a.txt":         true,
		"x/private/sub/a.txt":       false,
		"build/cache":               true,
		"build/a/b/cache/blob":      true,
		"build/a/b/cachet":          false,
		"other/build/a/cache/entry": false,
	} {
		if got := s.Denies(path); got != want {
			t.Errorf("Denies(%q) = %v, want %v", path, got, want)
		}
	}
}
