package realollama

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestFindBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ollama")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A fake module tree: root/go.mod and root/.tools/ollama/ollama, tests run in root/a/b.
	root := filepath.Join(dir, "root")
	nested := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A nested go.mod of another module must not stop the walk.
	if err := os.WriteFile(filepath.Join(root, "a", "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(root, filepath.FromSlash(binRelPath))

	env := func(bin string) func(string) string {
		return func(k string) string {
			if k == EnvBin {
				return bin
			}
			return ""
		}
	}
	wd := func() (string, error) { return nested, nil }

	t.Run("the environment variable wins", func(t *testing.T) {
		got, err := findBinary(env(exe), wd)
		if err != nil || got != exe {
			t.Fatalf("findBinary = %q, %v; want %q", got, err, exe)
		}
	})
	t.Run("a missing file is ErrNoBinary naming the path", func(t *testing.T) {
		_, err := findBinary(env(filepath.Join(dir, "nope")), wd)
		if !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a file that is not executable is refused", func(t *testing.T) {
		if _, err := findBinary(env(plain), wd); !errors.Is(err, ErrNoBinary) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a directory is refused", func(t *testing.T) {
		if _, err := findBinary(env(dir), wd); !errors.Is(err, ErrNoBinary) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("without the variable it looks under the module root", func(t *testing.T) {
		_, err := findBinary(env(""), wd)
		if !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), tools) {
			t.Fatalf("before the build: err = %v, want ErrNoBinary at %s", err, tools)
		}
		if err := os.MkdirAll(filepath.Dir(tools), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tools, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := findBinary(env(""), wd)
		if err != nil || got != tools {
			t.Fatalf("after the build: findBinary = %q, %v; want %q", got, err, tools)
		}
	})
	t.Run("outside the module it says so", func(t *testing.T) {
		_, err := findBinary(env(""), func() (string, error) { return dir, nil })
		if err == nil || !strings.Contains(err.Error(), modulePath) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestModeFromEnvironment(t *testing.T) {
	for value, want := range map[string]mode{
		"": modeDisabled, "1": modeRequired, "true": modeRequired, "0": modeDisabled, "no": modeDisabled, "maybe": modeDisabled,
	} {
		got := modeFrom(func(k string) string {
			if k == EnvRequire {
				return value
			}
			return ""
		})
		if got != want {
			t.Errorf("%s=%q: mode %d, want %d", EnvRequire, value, got, want)
		}
	}
}

func TestServerEnvKeepsTheDevelopersOllamaSettingsOut(t *testing.T) {
	base := []string{"PATH=/usr/bin", "HOME=/root", "OLLAMA_HOST=0.0.0.0:11434", "OLLAMA_MODELS=/big/disk", "LANG=C"}
	got := serverEnv(base, "127.0.0.1:5", "/tmp/h", "/tmp/m", map[string]string{"OLLAMA_DEBUG": "1", "HOME": "/evil"})
	want := []string{"PATH=/usr/bin", "LANG=C", "HOME=/evil", "OLLAMA_DEBUG=1",
		"OLLAMA_HOST=127.0.0.1:5", "OLLAMA_MODELS=/tmp/m", "HOME=/tmp/h"}
	if !slices.Equal(got, want) {
		t.Fatalf("serverEnv =\n%q\nwant\n%q", got, want)
	}
	// os/exec uses the last value of a duplicated key: the harness's own HOME wins.
	if got[len(got)-1] != "HOME=/tmp/h" {
		t.Fatalf("HOME is not last: %q", got)
	}
}

func TestProcStatReadsOurOwnGroup(t *testing.T) {
	state, pgrp, ok := procStat(os.Getpid())
	if !ok {
		t.Skip("no /proc here")
	}
	if pgrp != syscall.Getpgrp() {
		t.Fatalf("pgrp = %d, want %d", pgrp, syscall.Getpgrp())
	}
	if state == 'Z' || state == 0 {
		t.Fatalf("state = %q for a running process", state)
	}
	if _, _, ok := procStat(1 << 30); ok {
		t.Fatal("procStat of a pid that cannot exist succeeded")
	}
}
