package run

// What a run writes besides its checkpoints: warnings, and events outside
// any node, with secrets redacted.

import (
	"io"
	"os"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/redact"
)

// note writes one event into the run's log and sinks outside any node.
func (e *runEnv) note(runID string, p events.Payload, sinks []graph.Sink) {
	ev := events.Event(runID, p)
	ev.Time = time.Now().UTC()
	for _, sink := range append([]graph.Sink{e.events}, sinks...) {
		sink.Handle(ev)
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// warningLog keeps the warning lines written to it.
type warningLog struct{ buf strings.Builder }

func (w *warningLog) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *warningLog) lines() []string {
	var out []string
	for _, l := range strings.Split(w.buf.String(), "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "warning: ")); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// redactingSink removes secrets from what an event carries (a node's error,
// a task title, a gate's feedback…) before events.jsonl records it.
type redactingSink struct {
	next graph.Sink
	red  *redact.Redactor
}

func (r redactingSink) Handle(ev graph.Event) {
	ev.Error = r.red.String(ev.Error)
	ev.Reason = r.red.String(ev.Reason)
	if len(ev.Data) > 0 {
		ev.Data = r.red.JSON(ev.Data)
	}
	r.next.Handle(ev)
}
