package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/proctest"
)

func TestDetectGates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string // name=command, ...
	}{
		{"go module", map[string]string{"go.mod": "module x\n"},
			"build=go build ./...|vet=go vet ./...|test=go test ./..."},
		{"npm with a test script", map[string]string{"package.json": `{"scripts":{"test":"jest"}}`}, "test=npm test"},
		{"npm placeholder test script is no gate", map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, ""},
		{"npm without scripts", map[string]string{"package.json": `{"name":"x"}`}, ""},
		{"pyproject", map[string]string{"pyproject.toml": "[project]\n"}, "test=pytest"},
		{"setup.py", map[string]string{"setup.py": ""}, "test=pytest"},
		{"setup.cfg", map[string]string{"setup.cfg": ""}, "test=pytest"},
		{"cargo", map[string]string{"Cargo.toml": "[package]\n"}, "test=cargo test"},
		{"makefile with a test target", map[string]string{"Makefile": "all:\n\tcc x.c\n\ntest: all\n\t./run\n"}, "test=make test"},
		{"makefile test variable is no target", map[string]string{"Makefile": "test := 1\n"}, ""},
		{"makefile only when nothing else", map[string]string{"Makefile": "test:\n\tgo test\n", "go.mod": "module x\n"},
			"build=go build ./...|vet=go vet ./...|test=go test ./..."},
		{"go and npm: builds first, second test suffixed", map[string]string{"go.mod": "module x\n", "package.json": `{"scripts":{"test":"vitest"}}`},
			"build=go build ./...|vet=go vet ./...|test=go test ./...|test-npm=npm test"},
		{"nothing", map[string]string{"README.md": "hi"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			var got []string
			for _, g := range DetectGates(dir) {
				if g.Timeout <= 0 {
					t.Errorf("gate %s has no timeout", g.Name)
				}
				got = append(got, g.Name+"="+g.Command)
			}
			if s := strings.Join(got, "|"); s != tc.want {
				t.Errorf("got  %s\nwant %s", s, tc.want)
			}
		})
	}
}

func TestRunGatePassAndFail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"in.txt": "content"})
	r := RunGate(bg(), testBox(t), dir, Gate{Name: "ok", Command: "cat in.txt; echo; echo err >&2; [ \"$CI\" = true ]"}, 0)
	if !r.Passed || r.ExitCode != 0 || r.TimedOut || r.Canceled {
		t.Fatalf("result %+v", r)
	}
	if r.Output != "content\nerr\n" {
		t.Errorf("output %q", r.Output)
	}
	r = RunGate(bg(), testBox(t), dir, Gate{Name: "bad", Command: "echo failing; exit 3"}, 0)
	if r.Passed || r.ExitCode != 3 || !strings.Contains(r.Output, "failing") {
		t.Errorf("result %+v", r)
	}
	if fb := r.Failure(); !strings.HasPrefix(fb, "Gate \"bad\" (echo failing; exit 3) failed, exit code 3."+OutputTail+"\n") || !strings.Contains(fb, "failing") {
		t.Errorf("feedback %q", fb)
	}
	r = RunGate(bg(), testBox(t), filepath.Join(dir, "missing"), Gate{Name: "x", Command: "true"}, 0)
	if r.Passed || !strings.Contains(r.Output, "could not start") {
		t.Errorf("missing dir: %+v", r)
	}
	if r := RunGate(bg(), testBox(t), dir, Gate{Name: "empty"}, 0); r.Passed {
		t.Error("empty command passed")
	}
}

func TestRunGateKeepsTheTail(t *testing.T) {
	t.Parallel()
	r := RunGate(bg(), testBox(t), t.TempDir(), Gate{Name: "noisy", Command: "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done"}, 1000)
	if !r.Passed {
		t.Fatal(r.Output)
	}
	if !strings.HasPrefix(r.Output, "[… ") || !strings.Contains(r.Output, " bytes cut …]\n") {
		t.Errorf("no cut marker: %q", r.Output[:60])
	}
	if !strings.HasSuffix(r.Output, "line 1999\n") {
		t.Errorf("tail lost: %q", r.Output[len(r.Output)-40:])
	}
	body := r.Output[strings.Index(r.Output, "\n")+1:]
	if len(body) > 1000 || !strings.HasPrefix(body, "line ") {
		t.Errorf("kept %d bytes starting %q", len(body), body[:20])
	}
	// The count in the marker plus what is kept is everything written.
	total := 0
	for i := range 2000 {
		total += len("line \n") + len(strconv.Itoa(i))
	}
	marker := r.Output[len("[… "):strings.Index(r.Output, " bytes")]
	cut, _ := strconv.Atoi(marker)
	if cut+len(body) != total {
		t.Errorf("cut %d + kept %d != %d", cut, len(body), total)
	}
}

// started waits until the gate's grandchild has written file.
func started(t *testing.T, file string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("grandchild never started")
}

func TestRunGateTimeoutKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	sleep := proctest.UniqueSleep(60)
	// The gate starts a grandchild that sleeps, and waits for it.
	cmd := `sh -c 'echo $$ > ` + pidFile + `; exec ` + sleep + `' & wait`
	start := time.Now()
	r := RunGate(bg(), testBox(t), dir, Gate{Name: "hang", Command: cmd, Timeout: 300 * time.Millisecond}, 0)
	elapsed := time.Since(start)
	if !r.TimedOut || r.Passed || r.Canceled {
		t.Fatalf("result %+v", r)
	}
	if elapsed > 5*time.Second {
		t.Errorf("took %s to return", elapsed)
	}
	if !strings.Contains(r.Output, "timed out after 300ms") {
		t.Errorf("output %q", r.Output)
	}
	started(t, pidFile)
	if !proctest.GoneWithin(sleep, 3*time.Second) {
		t.Errorf("grandchild %q still alive", sleep)
	}
}

func TestRunGateKillsAGrandchildThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	sleep := proctest.UniqueSleep(60)
	cmd := `trap '' TERM; sh -c 'echo $$ > ` + pidFile + `; exec ` + sleep + `' & wait; wait`
	start := time.Now()
	r := RunGate(bg(), testBox(t), dir, Gate{Name: "stubborn", Command: cmd, Timeout: 200 * time.Millisecond}, 0)
	if !r.TimedOut {
		t.Fatalf("result %+v", r)
	}
	if elapsed := time.Since(start); elapsed > killGrace+pipeGrace+3*time.Second {
		t.Errorf("took %s", elapsed)
	}
	started(t, pidFile)
	if !proctest.GoneWithin(sleep, 3*time.Second) {
		t.Errorf("grandchild %q still alive", sleep)
	}
}

func TestRunGateCancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	sleep := proctest.UniqueSleep(60)
	ctx, cancel := context.WithCancel(bg())
	go func() {
		started(t, pidFile)
		cancel()
	}()
	start := time.Now()
	r := RunGate(ctx, testBox(t), dir, Gate{Name: "c", Command: `sh -c 'echo $$ > ` + pidFile + `; exec ` + sleep + `' & wait`, Timeout: time.Minute}, 0)
	if !r.Canceled || r.TimedOut || r.Passed {
		t.Fatalf("result %+v", r)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %s", elapsed)
	}
	started(t, pidFile)
	if !proctest.GoneWithin(sleep, 3*time.Second) {
		t.Errorf("grandchild %q still alive", sleep)
	}
}

func TestRunGateReapsBackgroundLeftovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	sleep := proctest.UniqueSleep(60)
	// The gate passes but leaves a background process holding its output.
	cmd := `sh -c 'echo $$ > ` + pidFile + `; exec ` + sleep + `' & while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done; echo done`
	start := time.Now()
	r := RunGate(bg(), testBox(t), dir, Gate{Name: "bg", Command: cmd}, 0)
	if !r.Passed || r.Output != "done\n" {
		t.Fatalf("result %+v", r)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("took %s: waited on the leftover's open output", elapsed)
	}
	started(t, pidFile)
	if !proctest.GoneWithin(sleep, 3*time.Second) {
		t.Errorf("leftover %q still alive", sleep)
	}
}

func TestRunGatesStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := RunGates(bg(), testBox(t), dir, []Gate{
		{Name: "build", Command: "true"},
		{Name: "test", Command: "echo broken; false"},
		{Name: "lint", Command: "touch linted"},
	}, 0)
	if len(res) != 2 || !res[0].Passed || res[1].Passed || AllPassed(res) {
		t.Fatalf("results %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "linted")); err == nil {
		t.Error("gate after the failure ran")
	}
	if !AllPassed(RunGates(bg(), testBox(t), dir, []Gate{{Name: "a", Command: "true"}}, 0)) {
		t.Error("passing gates not all passed")
	}
}

func TestRunGateOnARealGoModule(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds Go code")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.21\n",
		"m.go":        "package m\n\nfunc Add(a, b int) int { return a - b }\n",
		"m_test.go":   "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n",
		"cmd/x/x.go":  "package main\n\nfunc main() {}\n",
		"bad/note.md": "not go",
	})
	res := RunGates(bg(), testBox(t), dir, DetectGates(dir), 0)
	if len(res) != 3 || !res[0].Passed || !res[1].Passed || res[2].Passed {
		t.Fatalf("results %+v", res)
	}
	if !strings.Contains(res[2].Output, "Add(2, 3) != 5") {
		t.Errorf("test output %q", res[2].Output)
	}
}

func TestRunGateWithAnAlreadyCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(bg())
	cancel()
	r := RunGate(ctx, testBox(t), t.TempDir(), Gate{Name: "x", Command: "true"}, 0)
	if r.Passed || !r.Canceled {
		t.Errorf("result %+v", r)
	}
}
