package mcpserver

// The runs this server starts are lemmings processes of their own: exactly
// the CLI's `lemmings run` and `lemmings resume`, detached so that they
// outlive the MCP client's session and this server.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/workspace"
)

// MCPDir is where lemmings mcp keeps, under .lemmings/, the output of the
// processes it starts (<run-id>.log) and the plans it was given as text.
const MCPDir = "mcp"

// child is a lemmings process this server started for a run.
type child struct {
	runID   string
	verb    string // "run" or "resume"
	logPath string
	logFrom int64 // where this process's output starts in the log
	started time.Time
	done    chan struct{}
	code    int // exit code, once done (-1: killed by a signal)
}

func (c *child) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// LogPath is the output of the lemmings processes started for a run.
func LogPath(root, runID string) string {
	return filepath.Join(root, run.DataDir, MCPDir, runID+".log")
}

// start starts `lemmings -C root <global flags> args...` detached, stdin on
// its standard input, its output appended to the run's log (readable by
// you only; the CLI redacts what it prints).
func (s *Server) start(ctx context.Context, runID, verb, stdin string, args ...string) (*child, error) {
	// .lemmings/ is ignored through .git/info/exclude before anything is
	// written there, as the CLI does.
	repo, err := workspace.OpenRepo(ctx, s.opts.Root)
	if err != nil {
		return nil, err
	}
	if err := repo.ExcludeRunData(); err != nil {
		return nil, err
	}
	c := &child{runID: runID, verb: verb, logPath: LogPath(s.opts.Root, runID), done: make(chan struct{}), started: time.Now()}
	if err := privateDir(filepath.Dir(c.logPath)); err != nil {
		return nil, err
	}
	log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()                        // the process has its own descriptor
	if err := log.Chmod(0o600); err != nil { // a log of an earlier version
		return nil, err
	}
	argv := append(append([]string{"-C", s.opts.Root}, s.opts.Args...), args...)
	fmt.Fprintf(log, "== %s lemmings %s\n", time.Now().Format(time.DateTime), redact.String(strings.Join(quoteArgs(argv), " ")))
	if st, err := log.Stat(); err == nil {
		c.logFrom = st.Size()
	}
	cmd := exec.Command(s.opts.Exe, argv...)
	cmd.Dir = s.opts.Root
	cmd.Env = s.opts.Env
	cmd.Stdout, cmd.Stderr = log, log
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start lemmings %s: %w", verb, err)
	}
	go func() {
		err := cmd.Wait() // reaps it while this server lives
		c.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.code = ee.ExitCode()
		} else if err != nil {
			c.code = -1
		}
		close(c.done)
	}()
	s.mu.Lock()
	s.children[runID] = c
	s.mu.Unlock()
	s.logf("run %s: started lemmings %s (pid %d), output in %s", runID, verb, cmd.Process.Pid, c.logPath)
	return c, nil
}

// privateDir makes dir (below .lemmings/) readable by you only, as the
// rest of .lemmings/ is.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// childOf returns the last process started here for a run, or nil.
func (s *Server) childOf(runID string) *child {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.children[runID]
}

// latestChild is the run whose process was started here last ("" if none).
func (s *Server) latestChild() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var latest *child
	for _, c := range s.children {
		if latest == nil || c.started.After(latest.started) {
			latest = c
		}
	}
	if latest == nil {
		return ""
	}
	return latest.runID
}

// settle waits until the process ends or holds the run's lock (it has
// started the run, or resumed it), at most StartWait.
func (s *Server) settle(ctx context.Context, c *child) {
	deadline := time.NewTimer(s.opts.StartWait)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
			if store, err := inspect.Open(s.opts.Root); err == nil && store.Active(ctx, c.runID) {
				return
			}
		}
	}
}

// failure is what the ended process said, as the CLI prints it: its last
// "lemmings: …" message and what follows (the fix), else the tail of its
// output.
func (c *child) failure() error {
	out := readFrom(c.logPath, c.logFrom)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(lines[i], "lemmings: "); ok {
			return errors.New(strings.TrimSpace(strings.Join(append([]string{msg}, lines[i+1:]...), "\n")))
		}
	}
	tail := lines[max(0, len(lines)-10):]
	return fmt.Errorf("lemmings %s ended with exit code %d; its last output:\n%s", c.verb, c.code, strings.Join(tail, "\n"))
}

// readFrom returns a file's contents from offset (at most its last 64 KiB).
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size()-offset > 64<<10 {
		offset = st.Size() - 64<<10
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	data, _ := io.ReadAll(f)
	return string(bytes.ToValidUTF8(data, []byte("?")))
}

// quoteArgs quotes the arguments a shell would split, for the log header.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
