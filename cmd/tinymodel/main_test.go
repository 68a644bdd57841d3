package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/tinymodel"
)

func TestRunWritesTheSameFilesAsGenerate(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"-out", dir, "-seed", "5"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	paths := strings.Fields(out.String())
	if len(paths) != 5 {
		t.Fatalf("printed %q, want five paths", paths)
	}
	want, err := tinymodel.Generate(t.TempDir(), 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := os.ReadFile(filepath.Join(want.Dir, filepath.Base(p)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, ref) {
			t.Errorf("%s differs from Generate's", filepath.Base(p))
		}
	}
}

func TestRunRejectsBadUsage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		code int
		says string
	}{
		"an unknown flag":            {[]string{"-bogus"}, 2, "bogus"},
		"a seed that is no number":   {[]string{"-seed", "x"}, 2, "seed"},
		"stray arguments":            {[]string{"extra"}, 2, "unexpected arguments"},
		"an out path that is a file": {[]string{"-out", file}, 1, "tinymodel:"},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.says) || out.Len() != 0 {
			t.Errorf("%s: exit %d (want %d), stderr %q, stdout %q", name, code, tc.code, errOut.String(), out.String())
		}
	}
}
