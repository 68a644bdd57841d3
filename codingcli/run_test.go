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
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/proctest"
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
	p := Preset{Name: "ghost", Args: []string{"lemmings-no-such-cli-xyz", "-p"}, Stdin: true, Install: "npm install -g ghost-cli"}
	_, err := Run(context.Background(), p, Request{Sandbox: testBox(t), Dir: t.TempDir(), Prompt: "x"})
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
	res, err := Run(context.Background(), textPreset(bin), Request{Sandbox: testBox(t), Dir: t.TempDir()})
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
	sleep := proctest.UniqueSleep(300)
	bin := script(t, fmt.Sprintf("%s &\necho started\nwait\n", sleep))
	start := time.Now()
	res, err := Run(context.Background(), textPreset(bin), Request{Sandbox: testBox(t), Dir: dir, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("TimedOut false; result %+v", res)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Run took %v after a 500ms timeout", d)
	}
	if !proctest.GoneWithin(sleep, 3*time.Second) {
		t.Fatalf("the CLI's child %q still runs after the timeout", sleep)
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
	res, err := Run(context.Background(), p, Request{Sandbox: testBox(t), Dir: t.TempDir(), Env: map[string]string{"FAKECLI_MODE": "request", "HOME": "/nonexistent-home"}})
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

// The prompt reaches the CLI on standard input or in a private file, never
// in its command line (which other users read in /proc), and redacted.
func TestRunPromptNeverInArgv(t *testing.T) {
	bin := script(t, "for a in \"$@\"; do echo \"arg:$a\"; done\nif [ -n \"$2\" ] && [ -f \"$2\" ]; then echo \"mode:$(stat -c %a \"$2\")\"; sed 's/^/file:/' \"$2\"; fi\nsed 's/^/stdin:/'\n")
	secret := "gh" + "p_" + "Rm1tK9pQ2wE4rT6yU8iO0pA3sD5fG7hJ9kL1"
	p := textPreset(bin, "-p", "{prompt_file}", "--model", "{model}", "--flag")
	p.Stdin = true
	res, err := Run(context.Background(), p, Request{Sandbox: testBox(t), Dir: t.TempDir(), Prompt: "line one\ntoken " + secret + "\n", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(res.Final, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "arg:/") || !strings.HasSuffix(lines[1], "prompt.md") {
		t.Fatalf("{prompt_file} is not a file path:\n%s", res.Final)
	}
	for _, want := range []string{"arg:--model\narg:m1\narg:--flag\nmode:600\nfile:line one\nfile:token [REDACTED:github-pat]\nstdin:line one\nstdin:token [REDACTED:github-pat]"} {
		if !strings.Contains(res.Final, want) {
			t.Errorf("the CLI saw:\n%s\nwant:\n%s", res.Final, want)
		}
	}
	if strings.Contains(res.Final, secret) {
		t.Errorf("the secret reached the CLI")
	}
	if _, err := os.Stat(strings.TrimPrefix(lines[1], "arg:")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the prompt file outlives the run: %v", err)
	}
	p = textPreset(bin, "-p", "{prompt}")
	if _, err := Run(context.Background(), p, Request{Sandbox: testBox(t), Dir: t.TempDir(), Prompt: "x"}); !errors.Is(err, ErrPromptInArgv) {
		t.Errorf("{prompt} in the command line: %v, want ErrPromptInArgv", err)
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
	sleep := proctest.UniqueSleep(300)
	bin := script(t, fmt.Sprintf("%s &\necho done\nexit 0\n", sleep))
	start := time.Now()
	res, err := Run(context.Background(), textPreset(bin), Request{Sandbox: testBox(t), Dir: t.TempDir(), Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second || res.TimedOut || res.ExitCode != 0 || res.Final != "done" {
		t.Fatalf("after %v: %+v", d, res)
	}
	if !proctest.GoneWithin(sleep, 3*time.Second) {
		t.Fatalf("leftover %q still runs", sleep)
	}
}

// A preset's settings file exists for the run only, and a request that sets
// the variable itself (a user's own settings) wins.
func TestRunSettingsFile(t *testing.T) {
	bin := script(t, "echo \"path=$FAKECLI_SETTINGS\"\ncat \"$FAKECLI_SETTINGS\"\n")
	p := textPreset(bin)
	p.Settings, p.SettingsEnv = `{"memory": false}`, "FAKECLI_SETTINGS"
	res, err := Run(context.Background(), p, Request{Sandbox: testBox(t), Dir: t.TempDir()})
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
	res, err = Run(context.Background(), p, Request{Sandbox: testBox(t), Dir: t.TempDir(), Env: map[string]string{"FAKECLI_SETTINGS": own}})
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
	if sleep := os.Getenv("CODINGCLI_TEST_PLAY_LEMMINGS"); sleep != "" {
		dir := t.TempDir()
		bin := script(t, "exec "+sleep+"\n")
		_, _ = Run(context.Background(), textPreset(bin), Request{Sandbox: testBox(t), Dir: dir})
		return
	}
	sleep := proctest.UniqueSleep(300)
	lemmings := exec.Command(os.Args[0], "-test.run=^TestRunCLIDiesWithLemmings$")
	lemmings.Env = append(os.Environ(), "CODINGCLI_TEST_PLAY_LEMMINGS="+sleep)
	if err := lemmings.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(proctest.Running(sleep)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = lemmings.Process.Kill()
			t.Fatal("the CLI never started")
		}
	}
	_ = lemmings.Process.Kill()
	_ = lemmings.Wait()
	if !proctest.GoneWithin(sleep, 10*time.Second) {
		t.Fatalf("the CLI (%q) outlived lemmings by 10 s", sleep)
	}
}

// A CLI handed no sandbox does not run: a wiring error, not a default.
func TestRunWithoutASandboxIsAWiringError(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	bin := script(t, "touch "+marker+"\n")
	if _, err := Run(context.Background(), textPreset(bin), Request{Dir: dir}); err == nil || !strings.Contains(err.Error(), "wiring error") {
		t.Errorf("err %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the CLI ran without a sandbox")
	}
}
