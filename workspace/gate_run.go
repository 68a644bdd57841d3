package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/sandbox"
)

// DefaultMaxOutput is the tail of a gate's output kept when no cap is given.
const DefaultMaxOutput = 16 << 10

// How long a gate's process group gets between SIGTERM and SIGKILL, and how
// long the output is waited for once the group is gone.
const (
	killGrace = 2 * time.Second
	pipeGrace = 1 * time.Second
)

// GateResult is the outcome of one gate.
type GateResult struct {
	Name     string        `json:"name"`
	Command  string        `json:"command"`
	Passed   bool          `json:"passed"`
	ExitCode int           `json:"exit_code"` // -1 when killed or not started
	Output   string        `json:"output"`    // stdout and stderr interleaved, tail kept
	Duration time.Duration `json:"duration"`
	TimedOut bool          `json:"timed_out"`
	Canceled bool          `json:"canceled"` // ctx was cancelled: not the work's fault
}

// status says how the gate ended; failed is the word for a failure.
func (r GateResult) status(failed string) string {
	switch {
	case r.Passed:
		return "passed"
	case r.TimedOut:
		return "timed out"
	case r.Canceled:
		return "was cancelled"
	default:
		return fmt.Sprintf("%s (exit code %d)", failed, r.ExitCode)
	}
}

// OutputTail ends the first line of Failure: what follows is the gate's
// output. Readers that show only the headline cut it off.
const OutputTail = " Output (tail):"

// Failure renders a failed gate for QA's feedback, the report and the
// progress line: a headline of which gate ended how (no duration, so a
// resumed run's report reads the same as an uninterrupted one's), then the
// tail of its output.
func (r GateResult) Failure() string {
	how := fmt.Sprintf("exit code %d", r.ExitCode)
	if r.TimedOut {
		how = "timed out"
	}
	return fmt.Sprintf("Gate %q (%s) failed, %s.%s\n%s", r.Name, r.Command, how, OutputTail, r.Output)
}

// ErrNoSandbox: a gate (or a check) was handed no sandbox to run in.
var ErrNoSandbox = errors.New("no sandbox to run it in (a wiring error: the caller must pass the run's *sandbox.Box)")

// runGate is RunGate without its observer.
func runGate(ctx context.Context, box *sandbox.Box, dir string, g Gate, maxOutput int) GateResult {
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultGateTimeout
	}
	res := GateResult{Name: g.Name, Command: g.Command, ExitCode: -1}
	if strings.TrimSpace(g.Command) == "" {
		res.Output = "lemmings: the gate has no command"
		return res
	}
	if box == nil {
		// A wiring error, not a default: a gate run with a policy nobody
		// chose would go unnoticed.
		res.Output = "lemmings: could not start the gate: " + ErrNoSandbox.Error()
		return res
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, cleanup, err := box.Command(runCtx, sandbox.Spec{Dir: dir, Network: g.Network, Extra: []string{"CI=true"}}, "sh", "-c", g.Command)
	if err != nil {
		res.Output = fmt.Sprintf("lemmings: could not start the gate: %v", err)
		return res
	}
	defer cleanup()

	// The gate writes into a pipe of our own rather than one os/exec copies
	// from: Wait then returns when the shell exits, even if an orphan still
	// holds the write end, and killing the group closes it.
	pr, pw, err := os.Pipe()
	if err != nil {
		res.Output = fmt.Sprintf("lemmings: could not start the gate: %v", err)
		return res
	}
	out := &tailBuffer{max: maxOutput}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()

	cmd.Stdout, cmd.Stderr = pw, pw
	var killTimer *time.Timer
	var mu sync.Mutex
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		err := syscall.Kill(-pgid, syscall.SIGTERM)
		mu.Lock()
		killTimer = time.AfterFunc(killGrace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		mu.Unlock()
		return err
	}
	// If the shell itself survives SIGTERM and the grace, os/exec kills it.
	cmd.WaitDelay = killGrace + pipeGrace

	start := time.Now()
	err = cmd.Start()
	pw.Close() // the children hold their own copies
	if err != nil {
		pr.Close()
		<-copied
		res.Duration = time.Since(start)
		res.Canceled = ctx.Err() != nil
		res.Output = fmt.Sprintf("lemmings: could not start the gate: %v", err)
		return res
	}
	pgid := cmd.Process.Pid
	err = cmd.Wait()
	res.Duration = time.Since(start)
	// Whatever the gate left running in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	mu.Lock()
	if killTimer != nil {
		killTimer.Stop()
	}
	mu.Unlock()
	select {
	case <-copied:
	case <-time.After(pipeGrace):
		// A process outside the group (it left with setsid) holds the pipe.
		pr.Close()
		<-copied
	}
	pr.Close()

	res.Output = out.String()
	switch {
	case ctx.Err() != nil:
		res.Canceled = true
		res.Output += "\n[lemmings: cancelled; the gate's processes were killed]"
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		res.TimedOut = true
		res.Output += fmt.Sprintf("\n[lemmings: timed out after %s; the gate's processes were killed]", timeout)
	case err == nil:
		res.Passed, res.ExitCode = true, 0
	default:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			res.ExitCode = ee.ExitCode()
		}
	}
	return res
}

// RunGates runs gates in order, confined by box (see RunGate), and stops at
// the first that does not pass; it returns the results of the gates that
// ran.
func RunGates(ctx context.Context, box *sandbox.Box, dir string, gates []Gate, maxOutput int) []GateResult {
	results := make([]GateResult, 0, len(gates))
	for _, g := range gates {
		r := RunGate(ctx, box, dir, g, maxOutput)
		results = append(results, r)
		if !r.Passed {
			break
		}
	}
	return results
}

// AllPassed reports whether every result passed; RunGates stops at the
// first failure, so this tells whether all the gates passed. No gates, no
// failure.
func AllPassed(results []GateResult) bool {
	for _, r := range results {
		if !r.Passed {
			return false
		}
	}
	return true
}

// tailBuffer keeps the last max bytes written to it and counts the rest.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	// Trim in chunks so repeated small writes stay linear.
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Redact before cutting: a cut through a secret leaves a part no
	// rule recognises. The buffer holds at most 2*max bytes.
	b := redact.Default().Bytes(t.buf)
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	// Start on a whole character, and on a whole line when one starts soon.
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	cut := t.total - int64(len(b))
	if cut > 0 {
		if i := strings.IndexByte(string(b[:min(len(b), 200)]), '\n'); i >= 0 {
			b = b[i+1:]
			cut += int64(i + 1)
		}
		return fmt.Sprintf("[… %d bytes cut …]\n%s", cut, b)
	}
	return string(b)
}
