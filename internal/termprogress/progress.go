package termprogress

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
	"golang.org/x/term"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/runview"
	"github.com/lemmings-dev/lemmings/workspace"

	"github.com/lemmings-dev/lemmings/internal/termsafe"
)

// Progress renders a run's events for a person: a live status line on a
// terminal, plain lines when piped. With jsonOut every event is one JSON
// line. It is a graph.Sink.
type Progress struct {
	mu   sync.Mutex
	w    io.Writer
	live bool
	json bool
	// replay prints a stored log: elapsed times come from the events.
	replay  bool
	clock   time.Time
	start   time.Time
	node    string
	task    string
	counts  runview.Progress
	tokPerS float64
	cost    float64
	// cliTools counts the coding CLI's tool calls in its current run.
	cliTools int
	lastLen  int
	// haveCounts: a progress event has told the counts (a resumed run's
	// first lines have none yet, and must not show zeros).
	haveCounts bool
	// width is the terminal's width in columns: the live line is cut to it,
	// since a wrapped line cannot be cleared by \r\033[K. SIGWINCH updates it.
	width      int
	stopResize func()
	// call is the model call in flight (llm_start … llm_call).
	call modelCall
	// Verbose streams the models' text (--verbose).
	Verbose bool
	// Ephemeral: the repository is removed when the command ends (a plain
	// demo), so no path into it is printed.
	Ephemeral bool
	stopTick  chan struct{}
	tickDone  chan struct{}

	// resumeReset is a resume's world_reset, printed after its run_start.
	resumeReset *events.WorldReset
}

// modelCall is what the status line shows of a model call in flight.
type modelCall struct {
	label, model  string
	tokens        int
	tokPerS       float64
	prompt        int
	lastPlain     time.Time // last plain progress line of this call
	pending       string    // --verbose: streamed text not yet ended by a newline
	active        bool
	printedHeader bool
}

// New renders a live run to w.
func New(w io.Writer, jsonOut bool) *Progress {
	p := &Progress{w: w, json: jsonOut, live: !jsonOut && IsTerminal(w), start: time.Now()}
	if p.live {
		p.width = terminalWidth(w)
		p.stopResize = onResize(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.width = terminalWidth(w)
			if p.lastLen > 0 {
				p.liveLine()
			}
		})
		// The clock moves while a model call or a gate runs for minutes.
		p.stopTick, p.tickDone = make(chan struct{}), make(chan struct{})
		go p.tick(time.Second)
	}
	return p
}

func (p *Progress) tick(every time.Duration) {
	defer close(p.tickDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stopTick:
			return
		case <-t.C:
			p.mu.Lock()
			if p.node != "" { // streamed text waiting for its newline is not on the screen yet
				p.liveLine()
			}
			p.mu.Unlock()
		}
	}
}

// NewReplay renders a stored event log: times count from the run's start.
func NewReplay(w io.Writer, jsonOut bool) *Progress {
	return &Progress{w: w, json: jsonOut, replay: true}
}

// terminalWidth is the width of the terminal w writes to (80 when unknown).
func terminalWidth(w io.Writer) int {
	if f, ok := fileOf(w); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// fitWidth cuts line to fit in width columns without reaching the last one
// (a terminal wraps a line that fills its last column), counting wide
// characters as two.
func fitWidth(line string, width int) string {
	if width <= 1 {
		return line
	}
	return runewidth.Truncate(line, width-1, "…")
}

// fileOf finds the file under w's wrappers (the redacting writer).
func fileOf(w io.Writer) (*os.File, bool) {
	for {
		switch x := w.(type) {
		case *os.File:
			return x, true
		case interface{ Unwrap() io.Writer }:
			w = x.Unwrap()
		default:
			return nil, false
		}
	}
}

// IsTerminal reports whether w (under its redacting wrappers) is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := fileOf(w)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Handle implements graph.Sink.
func (p *Progress) Handle(ev graph.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.replay {
		// The run's start is its run_start event, else the first event.
		if p.start.IsZero() || ev.Kind == graph.EventRunStart && ev.Time.Before(p.start) {
			p.start = ev.Time
		}
		p.clock = ev.Time
	}
	if p.json {
		line, _ := json.Marshal(ev)
		fmt.Fprintf(p.w, "%s\n", line)
		return
	}
	switch ev.Kind {
	case graph.EventRunStart:
		if p.replay && ev.Step > 0 {
			p.resumedLine(ev)
		}
	case graph.EventNodeStart:
		p.node = ev.Node
		if !p.live {
			p.printf("%s", strings.TrimRight(fmt.Sprintf("%s %-16s %s", p.elapsed(), ev.Node, p.summary()), " "))
		}
	case graph.EventRetry:
		p.printf("%s retry %s (attempt %d): %s", p.elapsed(), ev.Node, ev.Attempt, ev.Error)
	case graph.EventInterrupt:
		p.printf("%s paused: %s", p.elapsed(), ev.Reason)
	case graph.EventError:
		p.printf("%s error in %s: %s", p.elapsed(), ev.Node, ev.Error)
	case graph.EventCustom:
		if data, err := events.Decode(ev); data != nil && err == nil {
			p.custom(data)
		}
	case graph.EventRunEnd:
		if p.replay {
			p.endLine(ev)
		}
	}
	if p.live {
		p.liveLine()
	}
}

func (p *Progress) custom(data events.Payload) {
	switch d := data.(type) {
	case *events.Progress:
		p.counts = runview.ProgressOf(*d)
		p.cost = p.counts.CostUSD
		p.haveCounts = true
	case *events.TaskPlanned:
		p.task = fmt.Sprintf("%v %v", d.Task, d.Title)
		p.printf("%s task %s", p.elapsed(), p.task)
	case *events.LLMStart, *events.LLMProgress, *events.LLMCall, *events.LLMRetry, *events.Reask, *events.ModelError:
		p.modelProgress(d)
	case *events.Action, *events.Check, *events.ImplementorGate, *events.ClaimOverruled, *events.Evidence:
		p.workProgress(d)
	case *events.Gate:
		status := "passed"
		if !d.Passed {
			status = fmt.Sprintf("FAILED (exit %v)", d.ExitCode)
		}
		p.printf("%s   gate %v %s", p.elapsed(), d.Gate, status)
	case *events.QA:
		if d.Passed {
			p.printf("%s   QA passed %v", p.elapsed(), d.Task)
		} else {
			p.printf("%s   QA failed %v: %v", p.elapsed(), d.Task, strings.TrimSuffix(textutil.FirstLine(d.Feedback), workspace.OutputTail))
			for _, l := range runview.FailureGist(d.Feedback) {
				p.printf("%s     %s", strings.Repeat(" ", len(p.elapsed())), l)
			}
		}
	case *events.Commit:
		p.printf("%s   commit %.10v %v", p.elapsed(), d.SHA, d.Task)
	case *events.TaskFailed:
		p.printf("%s   task %v failed: %v", p.elapsed(), d.Task, textutil.FirstLine(d.Reason))
	case *events.SupervisorStart:
		p.printf("%s   supervisor %v started (%v)", p.elapsed(), d.Supervisor, d.Trigger)
	case *events.SupervisorDone:
		p.printf("%s   supervisor %v: %v", p.elapsed(), d.Supervisor, d.Summary)
	case *events.CLIStart, *events.CLIEvent, *events.CLIRun, *events.CLIOutside, *events.CLICommitsDropped:
		p.cliProgress(d)
	case *events.WorldReset:
		switch {
		case !p.replay: // a resume says it on stderr as it happens
		case d.Why == "": // a resume's, said after the line it resumed at
			p.resumeReset = d
		default:
			p.resetLine(d)
		}
	case *events.MilestonesRejected:
		p.printf("%s   milestones rejected (%v): back to the ScopeAgent to plan them again", p.elapsed(), d.Reason)
	case *events.Warning:
		if d.Startup && !p.replay {
			return // printed on stderr when it arose, before the run's log was open
		}
		p.printf("%s warning: %v", p.elapsed(), d.Message)
	case *events.Told, *events.TaskUndone, *events.Forked:
		p.printf("%s %s", p.elapsed(), runview.SteerText(d))
	case *events.Trace:
		p.printf("%s trace %v → %v", p.elapsed(), d.TraceID, d.Endpoint)
	case *events.Report:
		if p.Ephemeral {
			p.printf("%s report written (in the temporary demo repository: lemmings demo --dir DIR keeps it)", p.elapsed())
		} else {
			p.printf("%s report written: %v", p.elapsed(), d.Path)
		}
	}
}

func (p *Progress) summary() string {
	if !p.haveCounts {
		return ""
	}
	s := p.counts.Counts()
	if p.tokPerS > 0 {
		s += fmt.Sprintf(" · %.0f tok/s", p.tokPerS)
	}
	if p.cost > 0 {
		s += fmt.Sprintf(" · $%.4f", p.cost)
	}
	if p.cliTools > 0 && p.node == runstate.NodeImplementor {
		s += fmt.Sprintf(" · cli %d tool calls", p.cliTools)
	}
	return s + "]"
}

// elapsed is the time since the run's start as [H:MM:SS]: one width for
// every line, the live one included.
func (p *Progress) elapsed() string {
	d := time.Since(p.start)
	if p.replay {
		d = p.clock.Sub(p.start)
	}
	return "[" + clockOf(d) + "]"
}

// clockOf formats d as H:MM:SS.
func clockOf(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// printf writes one plain line, clearing the live line first.
func (p *Progress) printf(format string, args ...any) {
	if p.live && p.lastLen > 0 {
		termsafe.Control(p.w, "\r\033[K")
		p.lastLen = 0
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *Progress) liveLine() {
	line := strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s %s", p.elapsed(), p.node, p.callState(), p.task, p.summary())), " ")
	// Redacted before it is fitted: the writer's redaction may not lengthen it past the width.
	line = fitWidth(redact.String(line), p.width)
	termsafe.Control(p.w, "\r\033[K")
	fmt.Fprint(p.w, line)
	p.lastLen = len(line)
}

// Close ends the live line.
func (p *Progress) Close() {
	if p.stopResize != nil {
		p.stopResize()
	}
	if p.stopTick != nil {
		close(p.stopTick)
		<-p.tickDone
		p.stopTick = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushText()
	if p.live && p.lastLen > 0 {
		fmt.Fprintln(p.w)
	}
}
