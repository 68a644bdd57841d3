package pathglob

import "testing"

func TestMatchFollowsTheGitignoreDialect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		glob string
		yes  []string
		no   []string
	}{
		{"*.go", []string{"a.go", "x/y/b.go"}, []string{"a.gox", "go"}},
		{"pkg/sub", []string{"pkg/sub/a.go", "pkg/sub/d/e.md", "pkg/sub"}, []string{"pkg/subway/a.go", "x/pkg/sub/a.go"}},
		{"pkg/sub/", []string{"pkg/sub/a.go"}, []string{"pkg/a.go", "pkg/sub"}},
		{"cmd/**/*.go", []string{"cmd/a.go", "cmd/x/y/a.go"}, []string{"a.go", "cmd/a.md"}},
		{"testdata", []string{"testdata/a", "x/testdata/b/c"}, []string{"testdatax/a"}},
		{"*.{md,txt}", []string{"a.md", "d/b.txt"}, []string{"a.go"}},
		{"?.go", []string{"a.go"}, []string{"ab.go"}},
		{"[!a]*.go", []string{"b.go"}, []string{"a.go"}},
		{"/top.txt", []string{"top.txt"}, []string{"deep/top.txt"}},
		{"secrets/**", []string{"secrets", "secrets/prod/db.yaml"}, []string{"config/secrets/x"}},
		{"credentials*", []string{"credentials.json", "credentials/gcp.json"}, []string{"my-credentials"}},
		{"**/private/*.txt", []string{"private/a.txt", "x/y/private/a.txt"}, []string{"x/private/sub/a.txt"}},
		{"build/**/cache", []string{"build/cache", "build/a/b/cache/blob"}, []string{"build/a/b/cachet", "other/build/a/cache/entry"}},
		{`\#notes`, []string{"#notes"}, []string{"notes"}},
	}
	for _, tc := range tests {
		g, err := Compile(tc.glob)
		if err != nil {
			t.Fatal(tc.glob, err)
		}
		for _, p := range tc.yes {
			if !g.Match(p, false) {
				t.Errorf("%q should match %q", tc.glob, p)
			}
		}
		for _, p := range tc.no {
			if g.Match(p, false) {
				t.Errorf("%q should not match %q", tc.glob, p)
			}
		}
	}
}

func TestDirectoryOnlyPatternsMatchDirectories(t *testing.T) {
	t.Parallel()
	g, err := Compile("build/")
	if err != nil {
		t.Fatal(err)
	}
	if g.Match("build", false) {
		t.Error(`"build/" matched a file named build`)
	}
	if !g.Match("build", true) || !g.Match("x/build", true) {
		t.Error(`"build/" did not match a directory named build`)
	}
}

func TestCompileRejectsBrokenPatterns(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "/", "*.{go", "[a-"} {
		if _, err := Compile(p); err == nil {
			t.Errorf("Compile(%q) accepted a broken pattern", p)
		}
	}
}
