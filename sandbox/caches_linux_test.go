package sandbox

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The attack of issue 33: a gate appended an init() to a dependency's
// source in the sandbox's module cache, and a later run in another
// repository compiled it. Each repository now has caches of its own: the
// second build gets the module as published.
func TestOneRepositorysGateCannotChangeWhatAnotherBuilds(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is needed")
	}
	requireSandbox(t, true)
	proxy := t.TempDir()
	writeModule(t, proxy, "example.com/dep", "v1.0.0", map[string]string{
		"go.mod": "module example.com/dep\n\ngo 1.21\n",
		"dep.go": "package dep\n\nconst V = \"dep as published\"\n",
	})
	cache := t.TempDir()
	env := []string{"GOPROXY=file://" + proxy, "GOSUMDB=off", "GOFLAGS=-mod=mod -modcacherw", "GOTOOLCHAIN=local"}
	program := map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n",
		"main.go": "package main\n\nimport \"example.com/dep\"\n\nfunc main() { println(dep.V) }\n",
	}
	build := func(scope, script string) ran {
		b, err := New(Config{CacheDir: cache, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		dir := t.TempDir()
		for name, body := range program {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return sh(t, b, Spec{Dir: dir, Extra: env}, script)
	}
	marker := fmt.Sprintf("lemmings-planted-%d", time.Now().UnixNano())
	r := build("/repos/hostile", `go run . 2>&1 && src=$(go list -m -f '{{.Dir}}' example.com/dep) &&
printf '\nfunc init() { panic("planted by another repository") }\n' >> "$src/dep.go" && echo planted && go run . 2>&1
echo x > "$GOCACHE/`+marker+`" && echo wrote-build-cache; true`)
	if !strings.Contains(r.out, "planted") || !strings.Contains(r.out, "panic: planted by another repository") || !strings.Contains(r.out, "wrote-build-cache") {
		t.Fatalf("the hostile gate could not plant its init() in its own cache:\n%s", r.out)
	}
	r = build("/repos/victim", "go run . 2>&1; ls \"$GOCACHE/"+marker+"\" 2>/dev/null && echo SAW-PLANTED-FILE; true")
	if !strings.Contains(r.out, "dep as published") || strings.Contains(r.out, "planted") || strings.Contains(r.out, "SAW-PLANTED-FILE") {
		t.Errorf("another repository's build ran the planted code (exit %d):\n%s", r.code, r.out)
	}
	// The user's own caches, layered below the sandbox's, are untouched.
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), marker)); err == nil {
			t.Errorf("the hostile gate wrote into your build cache")
		}
	}
}

// writeModule lays out one module version as a file proxy (GOPROXY=file://)
// serves it.
func writeModule(t *testing.T, proxy, path, version string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(proxy, path, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "list"), []byte(version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, version+".info"), []byte(`{"Version":"`+version+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, version+".mod"), []byte(files["go.mod"]), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	for name, body := range files {
		w, err := z.Create(path + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

// Two commands of one repository at once (parallel gates, two runs): the
// first holds the repository's cache layer, the second writes into a layer
// of its own, dropped when it ends; both work.
func TestTwoCommandsAtOnceShareNoUpperLayer(t *testing.T) {
	requireSandbox(t, true)
	b, err := New(Config{CacheDir: t.TempDir(), Scope: "/repos/busy"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.userGoEnv().Cache) == 0 || !isDir(b.userGoEnv().Cache) {
		t.Skip("no Go build cache of yours to layer over")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, done1, err := b.Command(ctx, Spec{Dir: t.TempDir()}, "sh", "-c", `sleep 1; echo a > "$GOCACHE/first-file"`)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	r := sh(t, b, Spec{Dir: t.TempDir()}, `echo b > "$GOCACHE/second-file" && echo wrote`)
	if err := first.Wait(); err != nil || !strings.Contains(r.out, "wrote") {
		t.Fatalf("first: %v; second:\n%s", err, r.out)
	}
	done1()
	upper := filepath.Join(b.cache, ".layers", "go-build", "upper")
	if _, err := os.Stat(filepath.Join(upper, "first-file")); err != nil {
		t.Errorf("the first command's write is not in the repository's layer: %v", err)
	}
	if _, err := os.Stat(filepath.Join(upper, "second-file")); err == nil {
		t.Error("the second command wrote into the layer the first held")
	}
	r = sh(t, b, Spec{Dir: t.TempDir()}, `cat "$GOCACHE/first-file"; ls "$GOCACHE/second-file" 2>&1`)
	if !strings.Contains(r.out, "a\n") || !strings.Contains(r.out, "No such file") {
		t.Errorf("a later command sees:\n%s", r.out)
	}
}

// A gate that imports the tree's Python leaves no __pycache__ in it: a
// commit of the attempt would carry the bytecode (it did, on a real task).
func TestPythonBytecodeStaysOutOfTheTree(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	b := newBox(t, true)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mod.py"), []byte("X = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sh(t, b, Spec{Dir: dir}, `python3 -c "import mod; print(mod.X)"`)
	if !strings.Contains(r.out, "1") {
		t.Fatalf("the import did not run:\n%s", r.out)
	}
	if _, err := os.Stat(filepath.Join(dir, "__pycache__")); err == nil {
		t.Error("the gate left __pycache__ in the tree")
	}
}
