package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

const (
	addSpaces = "package add\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n    return a + b\n}\n"
	addGofmt  = "package add\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
)

// Go code the model writes lands as gofmt prints it; other files, Go that does not parse, Go
// under testdata/ and a file the repository kept unformatted land as written.
func TestWrittenGoFilesLandAsGofmtPrintsThem(t *testing.T) {
	t.Parallel()
	unformatted := "package keep\n\nvar  x = 1\n"
	cases := []struct {
		name, path, before, write, want string
	}{
		{"a new Go file indented with spaces", "add/add.go", "", addSpaces, addGofmt},
		{"a Go file that was gofmt'd", "add.go", addGofmt, addSpaces, addGofmt},
		{"a Go file that did not parse before", "add.go", "package add\n\nfunc Add(", addSpaces, addGofmt},
		{"Python, as the model wrote it", "add.py", "", "def add(a,b):\n  return a+b\n", "def add(a,b):\n  return a+b\n"},
		{"Go that does not parse: the parse checks decide", "add.go", addGofmt, "package add\n\nfunc Add(a, b int) int {\n    return a +\n", "package add\n\nfunc Add(a, b int) int {\n    return a +\n"},
		{"Go under testdata", "pkg/testdata/golden.go", "", addSpaces, addSpaces},
		{"a Go file the repository keeps unformatted", "keep.go", unformatted, unformatted + "func  F() {\n    return\n}\n", unformatted + "func  F() {\n    return\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			if c.before != "" {
				files[c.path] = c.before
			}
			f, dir := newFS(t, files)
			if err := f.WriteFile(c.path, []byte(c.write)); err != nil {
				t.Fatal(err)
			}
			if got := readGofmtCase(t, dir, c.path); got != c.want {
				t.Errorf("WriteFile: got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// SEARCH/REPLACE edits too: the file is formatted once every edit of the batch is in.
func TestEditedGoFilesLandAsGofmtPrintsThem(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, map[string]string{"add.go": "package add\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"})
	_, err := f.Apply([]Edit{
		{Path: "add.go", Search: "func Add(a, b int) int {\n\treturn a - b\n}\n", Replace: "func Add(a, b int) int {\n    return a - b\n}\n"},
		{Path: "add.go", Search: "    return a - b\n", Replace: "    return a + b\n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := readGofmtCase(t, dir, "add.go"); got != addGofmt {
		t.Errorf("got\n%q\nwant\n%q", got, addGofmt)
	}
	// Restore writes back what was there, byte for byte: undoing a change never formats.
	if err := f.Restore("add.go", []byte(addSpaces)); err != nil {
		t.Fatal(err)
	}
	if got := readGofmtCase(t, dir, "add.go"); got != addSpaces {
		t.Errorf("Restore formatted the file: %q", got)
	}
}

func readGofmtCase(t *testing.T, dir, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
