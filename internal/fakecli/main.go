// Command fakecli plays a coding CLI in lemmings' tests: it prints a Qwen
// Code-like stream-json on stdout and changes files as a script says. Each
// invocation takes the next run of the script (a counter file sits next to
// it), so a test scripts several attempts.
//
//	fakecli --script run.json [--prompt-file FILE]   (no --prompt-file: read from stdin)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/proctest"
)

// Script is the whole scripted behaviour.
type Script struct {
	Runs []Run `json:"runs"`
	// Record, when set, is a directory where each run writes its prompt
	// (prompt-N.txt) and environment (env-N.txt).
	Record string `json:"record"`
	// Solutions plays a capable CLI on eval exercises: the files of the
	// exercise the prompt's task names ("Solve go/leap") are written, on
	// top of what the run does.
	Solutions map[string]map[string]string `json:"solutions"`
}

// exerciseRemit and exerciseTask find the exercise in the eval's remit
// (`exercise "go/leap"`) or in a planned task's title ("Solve go/leap").
var (
	exerciseRemit = regexp.MustCompile(`exercise "([^"]+)"`)
	exerciseTask  = regexp.MustCompile(`(?:Solve|Fix) (\S+)`)
)

// exerciseOf is the exercise a prompt is about ("" when none).
func exerciseOf(prompt string) string {
	if m := exerciseRemit.FindStringSubmatch(prompt); m != nil {
		return m[1]
	}
	if m := exerciseTask.FindStringSubmatch(prompt); m != nil {
		return m[1]
	}
	return ""
}

// Run is what one invocation does, in this order.
type Run struct {
	Replace []Replace         `json:"replace"`
	Write   map[string]string `json:"write"` // path (relative to the work dir, may leave it) → content
	// Home writes files relative to $HOME ("$VAR/…": to that variable's
	// folder), as a tool the CLI ran could (a login of another account).
	Home map[string]string `json:"home"`
	// Commit runs git add -A and git commit with this message.
	Commit string `json:"commit"`
	// Child starts `sleep 600.N` (N unique), writes that command line to
	// the file Child and does not wait for it (a tool the CLI started).
	Child string `json:"child"`
	Sleep string `json:"sleep"`
	// Error ends with an error result (is_error) instead of success.
	Error        string  `json:"error"`
	Exit         int     `json:"exit"`
	Stderr       string  `json:"stderr"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Final        string  `json:"final"`
	// EchoEnv names a variable whose value the final message repeats (a
	// CLI that echoes its key).
	EchoEnv string `json:"echo_env"`
}

// Replace swaps Old for New in Path.
type Replace struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

func main() {
	script := flag.String("script", "", "the script (JSON)")
	promptFile := flag.String("prompt-file", "", "a file holding the prompt (default: standard input)")
	flag.Parse()
	prompt := ""
	if *promptFile != "" {
		b, err := os.ReadFile(*promptFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakecli:", err)
			os.Exit(70)
		}
		prompt = string(b)
	}
	if err := run(*script, prompt); err != nil {
		fmt.Fprintln(os.Stderr, "fakecli:", err)
		os.Exit(70)
	}
}

func run(path, prompt string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sc Script
	if err := json.Unmarshal(data, &sc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	n := next(path + ".n")
	if prompt == "" {
		b, _ := io.ReadAll(os.Stdin)
		prompt = string(b)
	}
	if sc.Record != "" {
		_ = os.MkdirAll(sc.Record, 0o755)
		_ = os.WriteFile(filepath.Join(sc.Record, fmt.Sprintf("prompt-%d.txt", n)), []byte(prompt), 0o644)
		_ = os.WriteFile(filepath.Join(sc.Record, fmt.Sprintf("env-%d.txt", n)), []byte(strings.Join(os.Environ(), "\n")+"\n"), 0o644)
	}
	if len(sc.Runs) == 0 {
		return fmt.Errorf("%s has no runs", path)
	}
	r := sc.Runs[min(n, len(sc.Runs))-1]
	if files := sc.Solutions[exerciseOf(prompt)]; files != nil {
		if r.Write == nil {
			r.Write = map[string]string{}
		}
		for p, content := range files {
			r.Write[p] = content
		}
	}
	cwd, _ := os.Getwd()
	emit(map[string]any{"type": "system", "subtype": "init", "cwd": cwd, "model": "fake", "tools": []string{"write_file", "edit"}})
	calls := len(r.Replace) + len(r.Write)
	share := func(total int) int { return total / max(1, calls) }
	msg := 0
	toolUse := func(name string, input map[string]any, do func() error) {
		msg++
		id := "call_" + strconv.Itoa(msg)
		emit(assistant(id, []map[string]any{{"type": "tool_use", "id": id, "name": name, "input": input}}, share(r.InputTokens), share(r.OutputTokens)))
		result, isErr := "ok", false
		if err := do(); err != nil {
			result, isErr = err.Error(), true
		}
		emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "is_error": isErr, "content": result}}}})
	}
	for _, rp := range r.Replace {
		toolUse("edit", map[string]any{"file_path": rp.Path, "old_string": rp.Old, "new_string": rp.New}, func() error {
			b, err := os.ReadFile(rp.Path)
			if err != nil {
				return err
			}
			if !strings.Contains(string(b), rp.Old) {
				return fmt.Errorf("old_string not found in %s", rp.Path)
			}
			return os.WriteFile(rp.Path, []byte(strings.Replace(string(b), rp.Old, rp.New, 1)), 0o644)
		})
	}
	for p, content := range r.Write {
		toolUse("write_file", map[string]any{"file_path": p, "content": content}, func() error {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			return os.WriteFile(p, []byte(content), 0o644)
		})
	}
	for p, content := range r.Home {
		full := filepath.Join(os.Getenv("HOME"), p)
		if strings.HasPrefix(p, "$") {
			full = os.ExpandEnv(p)
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			return err
		}
	}
	if r.Commit != "" {
		for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=fake", "-c", "user.email=fake@cli.invalid", "commit", "-q", "--no-verify", "-m", r.Commit}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	if r.Child != "" {
		// The child's command line is unique, so a test finds it among the
		// host's processes whatever pid namespace the CLI runs in.
		marker := proctest.UniqueSleep(600)
		c := exec.Command("sh", "-c", "echo "+strconv.Quote(marker)+" > "+strconv.Quote(r.Child)+"; exec "+marker)
		if err := c.Start(); err != nil {
			return err
		}
		for i := 0; i < 200; i++ { // the pid file is there before the CLI goes on
			if b, err := os.ReadFile(r.Child); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if r.Sleep != "" {
		d, err := time.ParseDuration(r.Sleep)
		if err != nil {
			return err
		}
		time.Sleep(d)
	}
	final := r.Final
	if final == "" {
		final = "Done."
	}
	if r.EchoEnv != "" {
		final += " (signed in as " + os.Getenv(r.EchoEnv) + ")"
	}
	emit(assistant("msg_final", []map[string]any{{"type": "text", "text": final}}, 0, 0))
	res := map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": final,
		"usage": map[string]any{"input_tokens": r.InputTokens, "output_tokens": r.OutputTokens}, "total_cost_usd": r.CostUSD, "num_turns": msg + 1}
	if r.Error != "" {
		res["subtype"], res["is_error"], res["result"] = "error_during_execution", true, r.Error
	}
	emit(res)
	if r.Stderr != "" {
		fmt.Fprintln(os.Stderr, r.Stderr)
	}
	os.Exit(r.Exit)
	return nil
}

func assistant(id string, content []map[string]any, in, out int) map[string]any {
	return map[string]any{"type": "assistant", "message": map[string]any{"id": id, "type": "message", "role": "assistant", "model": "fake",
		"content": content, "usage": map[string]any{"input_tokens": in, "output_tokens": out}}}
}

func emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Printf("%s\n", b)
}

// next increments the counter in path and returns the new value (1 first).
func next(path string) int {
	b, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	n++
	_ = os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644)
	return n
}
