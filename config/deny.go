package config

import (
	"path"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/pathglob"
)

// Denies reports whether a repository-relative path matches one of the deny
// patterns, so that its content must never be sent to a cloud model.
//
// The patterns are globs of the dialect of .gitignore (package pathglob): a
// pattern without "/" matches any path element ("*.pem" denies
// "certs/server.pem"; "credentials*" denies everything under "credentials/");
// one with "/" matches from the repository root, "**" standing for any number
// of elements ("secrets/**" denies "secrets/a/b.txt"). A pattern that does
// not parse denies nothing; Check reports it.
func (s Supervisors) Denies(relPath string) bool {
	p := strings.Trim(path.Clean(strings.ReplaceAll(relPath, "\\", "/")), "/")
	if p == "" || p == "." {
		return false
	}
	for _, pat := range s.Deny {
		if g, err := pathglob.Compile(pat); err == nil && g.Match(p, false) {
			return true
		}
	}
	return false
}
