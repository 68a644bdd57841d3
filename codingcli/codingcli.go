// Package codingcli runs a coding CLI (Claude Code, Codex, Gemini CLI, Qwen
// Code or a custom command) as a stateless worker in one directory and reads
// the event stream it prints. It knows nothing of tasks, gates or commits: the
// caller renders the prompt and judges the result.
package codingcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/sandbox"

	"github.com/lemmings-dev/lemmings/internal/tempdir"
)

// Format names how a CLI reports its work on stdout.
type Format string

// Stream formats. FormatText is any CLI without an event stream: its whole
// stdout is the final message.
const (
	FormatText   Format = "text"
	FormatClaude Format = "claude-stream-json"
	FormatCodex  Format = "codex-json"
	FormatGemini Format = "gemini-json"
	FormatQwen   Format = "qwen-stream-json"
)

// Preset is one CLI's command line and what a user needs to have it work.
type Preset struct {
	Name string
	// Args is the command line. "{prompt_file}" is replaced by the path of
	// a file holding the prompt (0600, removed after the run) and "{model}"
	// by the model; an argument pair whose value is "{model}" is dropped
	// when no model is given. The prompt itself never goes in the command
	// line, which other users of the machine can read: Check refuses
	// "{prompt}".
	Args []string
	// Stdin sends the prompt on standard input instead of in Args.
	Stdin  bool
	Format Format
	// Install and Login are the advice shown when the CLI is missing or
	// cannot work (not logged in, no key).
	Install string
	Login   string
	// Env names the variables passed through from lemmings' environment to
	// the CLI (its own keys and settings). Nothing else of lemmings' passes.
	Env []string
	// SetEnv are values the preset always sets (telemetry off, no update
	// checks); Request.Env overrides them.
	SetEnv map[string]string
	// Settings, when set, is written to a temporary file for the run only
	// and the variable SettingsEnv names points at it: how a CLI's state
	// that outlives a run (Qwen Code's memories) is switched off without
	// touching the user's own settings or the worktree. A SettingsEnv the
	// request sets wins.
	Settings    string
	SettingsEnv string
	// Writable are the CLI's own state ("~/.qwen/", "$CODEX_HOME/",
	// "~/.claude.json"): the CLI gets private copies, writable, in a HOME of
	// the run's own (and the variable pointed at its copy), never the
	// originals, whose hooks and settings your next session would run. ~ is
	// the HOME the CLI would get; a variable it does not get is skipped; a
	// folder (written with a trailing /) that is missing is created.
	Writable []string
	// Credentials are the login files among Writable ("~/.codex/auth.json")
	// written back when the CLI refreshed them during the run.
	Credentials []string
	// OwnSandbox is the part of Args that turns the CLI's own sandbox on,
	// and Confined what replaces it when lemmings' sandbox confines the
	// CLI: a sandbox cannot start inside lemmings' (Landlock forbids the
	// mounts it needs), and lemmings' already bounds the CLI and all it runs.
	OwnSandbox, Confined []string
}

// Request is one run of a CLI.
type Request struct {
	Dir     string
	Prompt  string
	Model   string
	Timeout time.Duration
	// Env is set in the CLI's environment on top of the base set (PATH,
	// HOME, locale, TMPDIR) and the preset's Env.
	Env map[string]string
	// Sandbox confines the CLI and the commands it runs: writes only to Dir,
	// a private temp dir and the preset's Writable (plus the sandbox's own
	// writable paths); the network stays on for its model. Required: Run
	// refuses nil (a wiring error, not a default sandbox).
	Sandbox *sandbox.Box
	// OnEvent sees every event as it is parsed (for a progress line).
	OnEvent func(Event)

	promptFile string // the file {prompt_file} names, while Run runs
}

// EventKind classifies one parsed event.
type EventKind string

// Event kinds.
const (
	EventMessage  EventKind = "message"
	EventToolCall EventKind = "tool_call"
	EventUsage    EventKind = "usage"
	EventError    EventKind = "error"
	EventResult   EventKind = "result"
	// EventWarning is a problem the CLI reported and went on from (a retry,
	// a model it has no metadata for); it does not fail the run.
	EventWarning EventKind = "warning"
)

// Event is one thing the CLI reported.
type Event struct {
	Kind  EventKind
	Tool  string // for tool calls
	Text  string
	Usage Usage
}

// Usage is what the CLI said it spent.
type Usage struct {
	InputTokens  int
	OutputTokens int
	CostUSD      float64
}

// Add sums two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens, u.CostUSD + o.CostUSD}
}

// Result is how a run ended.
type Result struct {
	// Final is the CLI's last message (its own summary of the work).
	Final     string
	Usage     Usage
	ToolCalls int
	Events    []Event
	ExitCode  int
	TimedOut  bool
	// Failed is the CLI's own report of an error (an error event or result).
	Failed string
	// Stderr is the tail of standard error, for the failure message.
	Stderr string
	// Unparsed counts stdout lines the format's parser could not read.
	Unparsed int
	// Warnings are what the run did not do and why (a changed login that
	// was not written back over yours).
	Warnings []string
}

// parser reads one stdout line into zero or more events; ok is false for a
// line it could not read. A parser may keep state across the lines of one run.
type parser func(line []byte) (events []Event, ok bool)

// parsers makes a fresh parser per run for each format; a format without
// one reads as text.
var parsers = map[Format]func() parser{
	FormatClaude: newClaudeParser,
	FormatQwen:   newQwenParser,
	FormatCodex:  newCodexParser,
	FormatGemini: newGeminiParser,
}

// newParser returns the format's parser, or nil for text.
func newParser(f Format) parser {
	if mk, ok := parsers[f]; ok {
		return mk()
	}
	return nil
}

// ErrNotFound is returned (wrapped, with the install advice) when the
// preset's program is not on PATH.
var ErrNotFound = errors.New("coding CLI not found")

// ErrPromptInArgv: a command line would carry the prompt, which other users
// of the machine can read in the process list.
var ErrPromptInArgv = errors.New("the prompt must not be in the command line")

// Check says whether the preset's program can be started.
func (p Preset) Check() error {
	if len(p.Args) == 0 {
		return fmt.Errorf("coding CLI %q has no command line", p.Name)
	}
	for _, a := range p.Args {
		if strings.Contains(a, "{prompt}") {
			return fmt.Errorf("%w: coding CLI %q puts {prompt} in its command line; use {prompt_file} (a file holding the prompt) or no placeholder (the prompt on standard input)", ErrPromptInArgv, p.Name)
		}
	}
	if _, err := exec.LookPath(p.Args[0]); err != nil {
		return fmt.Errorf("%w: %s is not on PATH; install it: %s", ErrNotFound, p.Args[0], p.Install)
	}
	return nil
}

// baseEnv is what every CLI gets from lemmings' environment.
var baseEnv = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TERM"}

func (p Preset) environ(r Request) []string {
	var env []string
	for _, k := range append(append([]string{}, baseEnv...), p.Env...) {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	// Later entries win (os/exec keeps the last value of a duplicated key).
	for _, set := range []map[string]string{p.SetEnv, r.Env} {
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+set[k])
		}
	}
	return env
}

func (p Preset) argv(r Request, confined bool) []string {
	var out []string
	for i := 0; i < len(p.Args); i++ {
		a := p.Args[i]
		if confined && len(p.OwnSandbox) > 0 && slices.Equal(p.Args[i:min(i+len(p.OwnSandbox), len(p.Args))], p.OwnSandbox) {
			out = append(out, p.Confined...)
			i += len(p.OwnSandbox) - 1
			continue
		}
		if r.Model == "" && i+1 < len(p.Args) && p.Args[i+1] == "{model}" && strings.HasPrefix(a, "-") {
			i++
			continue
		}
		if r.Model == "" && a == "{model}" {
			continue
		}
		a = strings.ReplaceAll(a, "{model}", r.Model)
		a = strings.ReplaceAll(a, "{prompt_file}", r.promptFile)
		out = append(out, a)
	}
	return out
}

// Run starts the CLI in r.Dir with the prompt, reads its events until it
// exits or the timeout passes, and returns what it reported. An error means
// the CLI could not be run at all; a CLI that ran and failed is a Result with
// ExitCode, TimedOut or Failed set.
func Run(ctx context.Context, p Preset, r Request) (res Result, err error) {
	if err := p.Check(); err != nil {
		return Result{}, err
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	// What leaves lemmings for the CLI is redacted like every other output.
	r.Prompt = redact.String(r.Prompt)
	r, cleanup, err := p.withSettings(r)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	if slices.ContainsFunc(p.Args, func(a string) bool { return strings.Contains(a, "{prompt_file}") }) {
		file, remove, err := writePromptFile(r.Prompt)
		if err != nil {
			return Result{}, err
		}
		defer remove()
		r.promptFile = file
	}
	box := r.Sandbox
	if box == nil {
		// A wiring error, not a default sandbox nobody chose.
		return Result{}, errors.New("codingcli: no sandbox to run the CLI in (a wiring error: Request.Sandbox must be the run's *sandbox.Box)")
	}
	argv := p.argv(r, box.Confined())
	env, state, dropState, err := p.privateState(p.environ(r))
	if err != nil {
		return Result{}, err
	}
	defer func() { res.Warnings = append(res.Warnings, dropState()...) }()
	cmd, cleanup, err := box.Command(ctx, sandbox.Spec{Dir: r.Dir, Writable: state, Network: true, Env: env}, argv[0], argv[1:]...)
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	defer cleanup()
	setProcessGroup(cmd)
	if p.Stdin {
		cmd.Stdin = strings.NewReader(r.Prompt)
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr
	// stdout goes through a pipe of ours, not StdoutPipe: Wait then returns
	// when the CLI has exited even if a process it left behind still holds
	// its stdout (after the WaitDelay), and the reader sees the end.
	out, toReader := io.Pipe()
	cmd.Stdout = toReader
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	done := make(chan Result, 1)
	go func() {
		res := read(out, newParser(p.Format), r.OnEvent)
		_, _ = io.Copy(io.Discard, out) // not reached in practice: read reads to the end
		done <- res
	}()
	werr := cmd.Wait()
	// Whatever the CLI started and left running goes with it.
	killGroup(cmd)
	toReader.Close()
	res = <-done
	res.Stderr = stderr.String()
	if errors.Is(werr, exec.ErrWaitDelay) {
		werr = nil // the CLI exited; only a leftover held its output open
	}
	if ctx.Err() != nil {
		res.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		if !res.TimedOut {
			return res, ctx.Err()
		}
	}
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		res.ExitCode = ee.ExitCode()
	case werr != nil && !res.TimedOut:
		return res, werr
	}
	return res, nil
}

// withSettings writes the preset's Settings to a file of the run's own and
// points SettingsEnv at it.
func (p Preset) withSettings(r Request) (Request, func(), error) {
	if p.Settings == "" || p.SettingsEnv == "" {
		return r, func() {}, nil
	}
	if _, set := r.Env[p.SettingsEnv]; set {
		return r, func() {}, nil
	}
	dir, err := tempdir.Make(tempdir.CLI, p.Name+"-settings-")
	if err != nil {
		return r, nil, fmt.Errorf("%s settings: %w", p.Name, err)
	}
	path := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(path, []byte(p.Settings), 0o600); err != nil {
		os.RemoveAll(dir)
		return r, nil, fmt.Errorf("%s settings: %w", p.Name, err)
	}
	env := make(map[string]string, len(r.Env)+1)
	for k, v := range r.Env {
		env[k] = v
	}
	env[p.SettingsEnv] = path
	r.Env = env
	return r, func() { os.RemoveAll(dir) }, nil
}

// writePromptFile writes the prompt to a file only its owner can read, in a
// folder of its own (MkdirTemp makes it 0700), for {prompt_file}.
func writePromptFile(prompt string) (string, func(), error) {
	dir, err := tempdir.Make(tempdir.CLI, "prompt-")
	if err != nil {
		return "", nil, fmt.Errorf("prompt file: %w", err)
	}
	path := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(path, []byte(prompt), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("prompt file: %w", err)
	}
	return path, func() { os.RemoveAll(dir) }, nil
}
