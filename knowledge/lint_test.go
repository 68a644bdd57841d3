package knowledge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree creates files under dir from a map of relative path → content.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseReportsProblemsWithLines(t *testing.T) {
	long := "## Rules\n\n" + strings.Repeat("x", 501) + "\n"
	cases := []struct {
		name, src string
		line      int
		contains  string
	}{
		{"missing title", "_Status: established_\n## Rules\n1. a\n", 1, "missing title"},
		{"missing status", "# T\n\n## Rules\n1. a\n", 1, "missing status"},
		{"invalid status", "# T\n\n_Status: maybe_\n## Rules\n1. a\n", 3, `invalid status "maybe"`},
		{"rules over 500 characters", "# T\n_Status: established_\n\n" + long, 4, "rules section is 501 characters"},
		{"heading without space", "# T\n_Status: established_\n##Rules\n1. a\n", 3, "put a space after the #"},
		{"second title", "# T\n_Status: established_\n## Rules\n1. a\n# Again\n", 5, "more than one title"},
		{"malformed metadata", "# T\n_Status established_\n## Rules\n1. a\n", 2, "malformed metadata line"},
		{"unclosed metadata", "# T\n_Status: established\n## Rules\n1. a\n", 2, "malformed metadata line"},
		{"yaml front matter", "---\nstatus: established\n---\n# T\n## Rules\n", 1, "front matter is not read"},
		{"unclosed front matter", "---\nstatus: x\n# T\n", 1, "never closed"},
		{"unclosed fence", "# T\n_Status: established_\n## Rules\n```\ncode\n", 4, "never closed"},
		{"bad changelog entry", "# T\n_Status: established_\n## Rules\n1. a\n## Changelog\n- yesterday I fixed it\n", 6, "changelog entry not in the form"},
		{"duplicate section", "# T\n_Status: established_\n## Rules\n1. a\n## Rules\n2. b\n", 5, `second "Rules" section`},
		{"underlined title", "Title\n=====\n_Status: established_\n", 2, "underlined heading"},
		{"not utf-8", "# T\n_Status: established_\n\xff\xfe\n", 0, "not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := Parse("conventions/x.md", []byte(c.src))
			for _, p := range probs {
				if strings.Contains(p.Message, c.contains) {
					if p.Line != c.line || p.File != "conventions/x.md" {
						t.Errorf("problem %q at %s:%d, want line %d", p.Message, p.File, p.Line, c.line)
					}
					return
				}
			}
			t.Errorf("no problem containing %q; got %v", c.contains, probs)
		})
	}
}

func TestLintFindsStoreLevelProblemsAndLoadsTheRest(t *testing.T) {
	dir := t.TempDir()
	good := "# Naming\n_Status: established_\n## Rules\n1. Short names.\n"
	writeTree(t, dir, map[string]string{
		"conventions/naming.md":  good,
		"conventions/broken.md":  "no title here\n## Rules\n1. x\n",
		"design/naming_again.md": "# naming\n\n_Status: established_\n## Rules\n1. y\n",
		"recipes/cake.md":        "# Cake\n_Status: established_\n## Rules\n1. z\n",
		"stray.md":               "# Stray\n",
		"README.md":              "# not a doc\n",
		"conventions/_draft.md":  "ignored entirely",
		"conventions/image.png":  "\x89PNG",
	})
	probs := Lint(dir)
	text := FormatProblems(probs)
	for _, want := range []string{
		"conventions/broken.md:1: missing title",
		"conventions/broken.md:1: missing status line",
		`conventions/naming.md:1: duplicate title "Naming" (also in design/naming_again.md)`,
		`design/naming_again.md:1: duplicate title "naming" (also in conventions/naming.md)`,
		`recipes/: unknown category directory "recipes/"`,
		"stray.md: not in a category directory",
	} {
		if !strings.Contains(text, want+"") {
			t.Errorf("lint output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "_draft") || strings.Contains(text, "README") || strings.Contains(text, "png") {
		t.Errorf("lint looked at non-documents:\n%s", text)
	}
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := s.Get("conventions/naming.md"); !ok || d.Rules != "1. Short names." {
		t.Errorf("good doc not loaded beside broken ones: %v", d)
	}
	if _, ok := s.Get("conventions/broken.md"); !ok {
		t.Error("a malformed doc should still load as far as it parses")
	}
}

func TestLintOfCleanAndMissingDirs(t *testing.T) {
	if p := Lint(filepath.Join(t.TempDir(), "nope")); len(p) != 0 {
		t.Errorf("missing dir: %v", p)
	}
	dir := t.TempDir()
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"conventions/a.md": "# A\n_Status: established_\n## Rules\n1. a\n"})
	if p := Lint(dir); len(p) != 0 {
		t.Errorf("clean store has problems: %v", p)
	}
}
