package config

import (
	"path"
	"strings"
)

// Denies reports whether a repository-relative path matches one of the deny
// patterns, so that its content must never be sent to a cloud model.
//
// A pattern without "/" matches any single path element ("*.pem" denies
// "certs/server.pem"; "credentials*" denies everything under "credentials/").
// A pattern with "/" matches from the repository root, "**" standing for any
// number of elements ("secrets/**" denies "secrets/a/b.txt").
func (s Supervisors) Denies(relPath string) bool {
	p := strings.Trim(path.Clean(strings.ReplaceAll(relPath, "\\", "/")), "/")
	if p == "" || p == "." {
		return false
	}
	elems := strings.Split(p, "/")
	for _, pat := range s.Deny {
		pat = strings.Trim(pat, "/")
		if pat == "" {
			continue
		}
		if !strings.Contains(pat, "/") {
			for _, e := range elems {
				if ok, _ := path.Match(pat, e); ok {
					return true
				}
			}
			continue
		}
		if matchElems(strings.Split(pat, "/"), elems) {
			return true
		}
	}
	return false
}

// matchElems matches path elements against pattern elements, "**" spanning
// zero or more of them. A pattern that matches a directory denies what is in it.
func matchElems(pat, elems []string) bool {
	if len(pat) == 0 {
		return true // the path is inside a matched directory
	}
	if pat[0] == "**" {
		for i := 0; i <= len(elems); i++ {
			if matchElems(pat[1:], elems[i:]) {
				return true
			}
		}
		return false
	}
	if len(elems) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], elems[0]); !ok {
		return false
	}
	return matchElems(pat[1:], elems[1:])
}
