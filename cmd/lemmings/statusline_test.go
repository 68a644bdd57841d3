package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"
)

// syncBuffer collects a terminal's output while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// liveSegments returns the status line's redraws: the texts drawn after a
// "\r\033[K" and left without a newline (a plain progress line ends with
// one, and stays on the screen as it is).
func liveSegments(out string) []string {
	var segs []string
	for _, part := range strings.Split(out, "\r\x1b[K")[1:] {
		if part != "" && !strings.Contains(part, "\n") {
			segs = append(segs, part)
		}
	}
	return segs
}

// TestTheStatusLineFitsTheTerminalAndFollowsItsSize runs the demo on a
// pseudo-terminal of 80 columns, narrows it to 50 midway (the kernel sends
// SIGWINCH) and checks that no redraw of the status line reaches the last
// column, the one that makes a terminal wrap and leave stale copies.
func TestTheStatusLineFitsTheTerminalAndFollowsItsSize(t *testing.T) {
	c := newCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, t.TempDir(), "demo", "--no-supervisors")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	var out syncBuffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&out, tty); close(copied) }()

	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(out.String(), "task t2"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the demo never reached t2:\n%q", out.String())
		}
	}
	before := len(liveSegments(out.String()))
	if err := pty.Setsize(tty, &pty.Winsize{Cols: 50, Rows: 24}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("demo: %v\n%q", err, out.String())
	}
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
	}
	segs := liveSegments(out.String())
	if len(segs) <= before || before == 0 {
		t.Fatalf("status line drawn %d times before the resize, %d in all:\n%q", before, len(segs), out.String())
	}
	ansi := regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	cut := false
	for i, seg := range segs[:before] {
		w := runewidth.StringWidth(ansi.ReplaceAllString(seg, ""))
		if w >= 80 {
			t.Errorf("redraw %d is %d columns on an 80-column terminal: %q", i, w, seg)
		}
		cut = cut || strings.HasSuffix(seg, "…")
	}
	if !cut {
		t.Errorf("no status line was long enough to need cutting at 80 columns: the test proves nothing\n%q", segs[:before])
	}
	// The resize takes effect with the next redraw; from the first narrow
	// one on, every redraw fits 50 columns.
	narrow := -1
	for i := before; i < len(segs); i++ {
		w := runewidth.StringWidth(ansi.ReplaceAllString(segs[i], ""))
		if narrow < 0 && w < 50 {
			narrow = i
		}
		if narrow >= 0 && w >= 50 {
			t.Errorf("redraw %d after the resize is %d columns on a 50-column terminal: %q", i, w, segs[i])
		}
	}
	if narrow < 0 {
		t.Errorf("no redraw fits the narrowed terminal:\n%q", segs[before:])
	}
}
