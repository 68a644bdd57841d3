package codingcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fakecli")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func textPreset(bin string, args ...string) Preset {
	return Preset{Name: "fake", Args: append([]string{bin}, args...), Format: FormatText, Install: "install fakecli from the test"}
}

func TestRunMissingBinary(t *testing.T) {
	p := Preset{Name: "ghost", Args: []string{"lemmings-no-such-cli-xyz", "-p", "{prompt}"}, Install: "npm install -g ghost-cli"}
	_, err := Run(context.Background(), p, Request{Dir: t.TempDir(), Prompt: "x"})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "npm install -g ghost-cli") || !strings.Contains(err.Error(), "lemmings-no-such-cli-xyz") {
		t.Errorf("error %q lacks the program or the install advice", err)
	}
	for _, name := range Names() {
		p, _ := Lookup(name)
		if p.Install == "" || p.Login == "" {
			t.Errorf("preset %s lacks install or login advice", name)
		}
	}
}

func TestRunNonZeroExit(t *testing.T) {
	bin := script(t, "echo partial work\necho 'fatal: no credentials' >&2\nexit 3\n")
	res, err := Run(context.Background(), textPreset(bin), Request{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.TimedOut {
		t.Errorf("exit %d timed out %v, want 3 and no timeout", res.ExitCode, res.TimedOut)
	}
	if res.Final != "partial work" || !strings.Contains(res.Stderr, "no credentials") {
		t.Errorf("final %q stderr %q", res.Final, res.Stderr)
	}
}

// The timeout kills the CLI and everything it started: node CLIs run tools in
// shells of their own, which must not outlive the attempt.
func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	bin := script(t, fmt.Sprintf("sleep 300 &\necho $! > %s\necho started\nwait\n", pidFile))
	start := time.Now()
	res, err := Run(context.Background(), textPreset(bin), Request{Dir: dir, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("TimedOut false; result %+v", res)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Run took %v after a 500ms timeout", d)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the CLI still runs after the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Only the base set, the preset's Env, its SetEnv and Request.Env reach the
// CLI; Request.Env wins over SetEnv.
func TestRunEnvIsolation(t *testing.T) {
	t.Setenv("LEMMINGS_TEST_SECRET", "must-not-pass")
	t.Setenv("OPENROUTER_API_KEY", "must-not-pass")
	t.Setenv("FAKECLI_KEY", "passed")
	bin := script(t, "env\n")
	p := textPreset(bin)
	p.Env = []string{"FAKECLI_KEY", "FAKECLI_UNSET"}
	p.SetEnv = map[string]string{"FAKECLI_TELEMETRY": "off", "FAKECLI_MODE": "preset"}
	res, err := Run(context.Background(), p, Request{Dir: t.TempDir(), Env: map[string]string{"FAKECLI_MODE": "request", "HOME": "/nonexistent-home"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range strings.Split(res.Final, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
		}
	}
	allowed := map[string]bool{"FAKECLI_KEY": true, "FAKECLI_TELEMETRY": true, "FAKECLI_MODE": true,
		// set by /bin/sh itself
		"PWD": true, "SHLVL": true, "_": true, "OLDPWD": true}
	for _, k := range baseEnv {
		allowed[k] = true
	}
	var extra []string
	for k := range got {
		if !allowed[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("variables not asked for reached the CLI: %v", extra)
	}
	want := map[string]string{"FAKECLI_KEY": "passed", "FAKECLI_TELEMETRY": "off", "FAKECLI_MODE": "request", "HOME": "/nonexistent-home"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["FAKECLI_UNSET"]; ok {
		t.Error("an unset preset variable reached the CLI")
	}
}

func TestRunArgvAndStdin(t *testing.T) {
	bin := script(t, "for a in \"$@\"; do echo \"arg:$a\"; done\nsed 's/^/stdin:/'\n")
	p := textPreset(bin, "-p", "{prompt}", "--model", "{model}", "--flag")
	res, err := Run(context.Background(), p, Request{Dir: t.TempDir(), Prompt: "-x do it"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Final != "arg:-p\narg:-x do it\narg:--flag" {
		t.Errorf("argv without a model:\n%s", res.Final)
	}
	p.Stdin = true
	res, err = Run(context.Background(), p, Request{Dir: t.TempDir(), Prompt: "line one\nline two", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Final != "arg:-p\narg:{prompt}\narg:--model\narg:m1\narg:--flag\nstdin:line one\nstdin:line two" {
		t.Errorf("argv with stdin and a model:\n%s", res.Final)
	}
}

// Lines far over any buffer: one is parsed whole, one over the limit is
// skipped and counted, and the lines after both are still read (the CLI is
// never left blocked on a full pipe).
func TestReadHugeLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	huge := strings.Repeat("y", maxLine+10)
	in := `{"type":"assistant","message":{"id":"a","content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"assistant","message":{"id":"b","content":[{"type":"text","text":"` + huge + `"}]}}` + "\n" +
		`{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":5,"output_tokens":2}}`
	res := read(strings.NewReader(in), newQwenParser(), nil)
	if res.Unparsed != 1 {
		t.Errorf("unparsed = %d, want 1 (the over-long line)", res.Unparsed)
	}
	if len(res.Events) != 2 || len(res.Events[0].Text) != len(big) {
		t.Fatalf("events = %d, first text %d bytes", len(res.Events), len(res.Events[0].Text))
	}
	if res.Final != "done" || res.Usage != (Usage{InputTokens: 5, OutputTokens: 2}) {
		t.Errorf("final %q usage %+v", res.Final, res.Usage)
	}
	// Text output is kept to its last maxText bytes.
	res = read(strings.NewReader(huge+"\nthe end\n"), nil, nil)
	if len(res.Final) > maxText || !strings.HasSuffix(res.Final, "the end") {
		t.Errorf("text final %d bytes, ends %q", len(res.Final), res.Final[max(0, len(res.Final)-10):])
	}
}

// A CLI that exits leaving a background process holding its stdout: Run
// returns (after the wait delay, not the timeout), with the output read, and
// the leftover is killed.
func TestRunLeftoverProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	bin := script(t, fmt.Sprintf("sleep 300 &\necho $! > %s\necho done\nexit 0\n", pidFile))
	start := time.Now()
	res, err := Run(context.Background(), textPreset(bin), Request{Dir: t.TempDir(), Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second || res.TimedOut || res.ExitCode != 0 || res.Final != "done" {
		t.Fatalf("after %v: %+v", d, res)
	}
	raw, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(3 * time.Second)
	for pid > 0 && syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("leftover %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A preset's settings file exists for the run only, and a request that sets
// the variable itself (a user's own settings) wins.
func TestRunSettingsFile(t *testing.T) {
	bin := script(t, "echo \"path=$FAKECLI_SETTINGS\"\ncat \"$FAKECLI_SETTINGS\"\n")
	p := textPreset(bin)
	p.Settings, p.SettingsEnv = `{"memory": false}`, "FAKECLI_SETTINGS"
	res, err := Run(context.Background(), p, Request{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(res.Final, "\n")
	path := strings.TrimPrefix(first, "path=")
	if path == "" || rest != p.Settings {
		t.Fatalf("the CLI saw settings path %q and content %q, want a file holding %q", path, rest, p.Settings)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("settings file %s outlived the run (stat: %v)", path, err)
	}

	own := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(own, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err = Run(context.Background(), p, Request{Dir: t.TempDir(), Env: map[string]string{"FAKECLI_SETTINGS": own}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Final, "path="+own+"\n{}") {
		t.Errorf("with the request's own settings the CLI saw %q", res.Final)
	}
}

// Qwen Code's settings for a run turn off what would outlive it: memories
// extracted after the run and their periodic consolidation.
func TestQwenSettingsTurnOffMemory(t *testing.T) {
	p, _ := Lookup("qwen")
	var s struct {
		Memory map[string]bool `json:"memory"`
	}
	if err := json.Unmarshal([]byte(p.Settings), &s); err != nil {
		t.Fatalf("qwen settings are not JSON: %v", err)
	}
	for _, k := range []string{"enableManagedAutoMemory", "enableManagedAutoDream"} {
		if v, ok := s.Memory[k]; !ok || v {
			t.Errorf("memory.%s = %v (set %v), want false", k, v, ok)
		}
	}
	if p.SettingsEnv != "QWEN_CODE_SYSTEM_SETTINGS_PATH" {
		t.Errorf("settings variable %q", p.SettingsEnv)
	}
}

// When lemmings is killed outright (kill -9: no cleanup runs), the CLI it
// started does not go on working in the worktree. The test kills a child
// process that plays lemmings.
func TestRunCLIDiesWithLemmings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	if pidFile := os.Getenv("CODINGCLI_TEST_PLAY_LEMMINGS"); pidFile != "" {
		bin := script(t, "echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; exec sleep 120\n")
		_, _ = Run(context.Background(), textPreset(bin), Request{Dir: filepath.Dir(pidFile)}) // the CLI writes in its folder
		return
	}
	pidFile := filepath.Join(t.TempDir(), "cli.pid")
	lemmings := exec.Command(os.Args[0], "-test.run=^TestRunCLIDiesWithLemmings$")
	lemmings.Env = append(os.Environ(), "CODINGCLI_TEST_PLAY_LEMMINGS="+pidFile)
	if err := lemmings.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = lemmings.Process.Kill()
			t.Fatal("the CLI never started")
		}
		if data, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
	}
	_ = lemmings.Process.Kill()
	_ = lemmings.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) || zombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the CLI (pid %d) outlived lemmings by 10 s", pid)
		}
	}
}

// zombie: the process has died and waits for a parent to reap it (an
// orphan's new parent may be slow to).
func zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(stat), ") ")
	return ok && strings.HasPrefix(after, "Z")
}
