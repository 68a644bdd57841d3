package runview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// What the report reads from the run's event log: the state keeps each
// task's last attempt, the log every attempt and the time of every node,
// across every process that worked on the run (a resumed run included).

// FailedAttempt is one implementor attempt that did not pass, and why.
type FailedAttempt struct {
	TaskID  string
	Attempt int
	Reason  string
}

// FailedAttempts reads from the event log at path why each failed attempt
// failed: QA's verdict, or the implementor's own ending (a loop, a blocked
// answer). A step run again after a crash logs the same attempt twice: the
// last word counts.
func FailedAttempts(path string) []FailedAttempt {
	var out []FailedAttempt
	at := map[string]int{}
	put := func(fa FailedAttempt) {
		key := fmt.Sprintf("%s#%d", fa.TaskID, fa.Attempt)
		if i, ok := at[key]; ok {
			out[i] = fa
			return
		}
		at[key] = len(out)
		out = append(out, fa)
	}
	eachEvent(path, func(ev graph.Event) {
		data, err := events.Decode(ev)
		if err != nil {
			return
		}
		switch d := data.(type) {
		case *events.QA:
			if d.Task == "" || d.Passed {
				return
			}
			reason := strings.TrimSuffix(textutil.FirstLine(d.Feedback), workspace.OutputTail)
			if gist := FailureGist(d.Feedback); len(gist) > 0 {
				reason += " " + strings.Join(gist, " / ")
			}
			put(FailedAttempt{TaskID: d.Task, Attempt: d.Attempt, Reason: "QA failed: " + reason})
		case *events.Implementation:
			if d.Task != "" && d.Status != "" && d.Status != runstate.ImplFinished {
				put(FailedAttempt{TaskID: d.Task, Attempt: d.Attempt, Reason: "the implementor ended with " + string(d.Status)})
			}
		}
	})
	return out
}

type nodeTime struct {
	runs  int
	total time.Duration
}

// nodeTimes sums node durations from the event log at path.
func nodeTimes(path string) map[string]nodeTime {
	out := map[string]nodeTime{}
	eachEvent(path, func(ev graph.Event) {
		if ev.Kind != graph.EventNodeEnd {
			return
		}
		t := out[ev.Node]
		t.runs++
		t.total += ev.Duration
		out[ev.Node] = t
	})
	return out
}

// eachEvent calls fn with each event of the log at path that reads as one.
func eachEvent(path string, fn func(graph.Event)) {
	if path == "" {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev graph.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			fn(ev)
		}
	}
}

// failureLine matches a line that says what failed: a test's FAIL line, a
// panic, an error, an assertion, or a file:line location.
var failureLine = regexp.MustCompile(`(?i)(^\s*--- FAIL|panic:|error|fail|assert|expected|\bwant\b|\bgot\b|\S+\.\w+:\d+)`)

// FailureGist returns the lines after feedback's first (which names the
// gate or the verdict) that say why an attempt failed: at most three, each
// at most 160 characters, from the first that looks like a failure (a FAIL
// line, an error, an assertion, a file:line) or else from the start.
// The progress line and the report show it, so that the failing assertion
// is not only in events.jsonl.
func FailureGist(feedback string) []string {
	var lines []string
	for _, l := range strings.Split(feedback, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \t\r"))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	lines = lines[1:]
	from := 0
	for i, l := range lines {
		if failureLine.MatchString(l) {
			from = i
			break
		}
	}
	var out []string
	for _, l := range lines[from:min(from+3, len(lines))] {
		out = append(out, textutil.ClipTrimmed(l, 160))
	}
	return out
}

// ResumedText is the line that marks in a run's events where a resume took
// the run up (a run_start after step 0), with how the run stood then in
// status's words.
func ResumedText(ev graph.Event) string {
	was := runstate.StandingOf(runstate.Stored{Status: ev.Status}, &runstate.State{}).Status
	return fmt.Sprintf("resumed at step %d (status: %s)", ev.Step, was)
}

// ResetText says of a world_reset event that the work tree was put back at
// the last checkpoint, and where what the cut-off step had left is kept.
func ResetText(r *events.WorldReset) string {
	to := r.To[:min(len(r.To), 10)]
	if rescue := r.Rescue; rescue != "" {
		return fmt.Sprintf("work tree put back at %s: the step that was cut off runs again; what it had left is on branch %s (git diff %s %s)", to, rescue, to, rescue)
	}
	return fmt.Sprintf("work tree put back at %s: the step that was cut off runs again from its start", to)
}

// SteerText says a told message or an undone task the run took in, as
// lemmings log, serve and the MCP server show it ("" for other events).
func SteerText(p events.Payload) string {
	switch d := p.(type) {
	case *events.Told:
		return fmt.Sprintf("told by the user (%s, directive %s): %s", d.Priority, d.Directive, textutil.FirstLine(d.Message))
	case *events.TaskUndone:
		return fmt.Sprintf("task %s undone by the user (revert %.10s): %s", d.Task, d.Revert, textutil.FirstLine(d.Reason))
	case *events.Forked:
		text := fmt.Sprintf("forked from %s@%d", d.Parent, d.Step)
		if d.RejectTask != "" {
			text += fmt.Sprintf(", task %s taken back: %s", d.RejectTask, textutil.FirstLine(d.Reason))
		}
		if d.Remit {
			text += ", with a new remit"
		}
		return text
	}
	return ""
}

// StandingSetText says the standing an undo or a fork gave a run from
// outside it (a run_end event with events.RunEnd.By set): the word, the step
// and how to go on, as status and the report say them. ok is false for a
// run_end its own process wrote.
func StandingSetText(ev graph.Event) (string, bool) {
	var end events.RunEnd
	if ev.Kind != graph.EventRunEnd || json.Unmarshal(ev.Data, &end) != nil || end.By == "" {
		return "", false
	}
	text := fmt.Sprintf("after %s the run is %s at step %d", end.By, ev.Status, ev.Step)
	if ev.Reason != "" {
		text += " — " + ev.Reason
	}
	if end.Next != "" {
		text += "; how to go on: " + end.Next
	}
	return text, true
}
