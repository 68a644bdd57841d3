package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/internal/termsafe"
)

// heartbeat keeps idle streams open through proxies and tells a gone client.
const heartbeat = 15 * time.Second

// streamEvent is what the page's script receives for each event.
type streamEvent struct {
	eventRow
	Clock string `json:"clock"`
	Run   bool   `json:"run_end"`
	// Stream is the model's text that arrived with an llm_progress event.
	Stream string `json:"stream,omitempty"`
	// Row: the event belongs in the timeline (progress only updates "now").
	Row bool `json:"row"`
}

// handleEvents streams a run's events as server-sent events, from the byte
// offset the page was rendered at (?from=) or the last one the browser saw
// (Last-Event-ID). It only reads the log, line by complete line.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	offset := int64(0)
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("from")} {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			offset = n
			break
		}
	}
	src := s.source()
	if !s.runStored(r.Context(), id) {
		http.Error(w, "no such run "+id+" (the runs page lists them)", http.StatusNotFound)
		return
	}
	// A run that nothing moves, read to its end: 204 tells the browser's
	// EventSource to stop reconnecting.
	if got, err := src.Events(r.Context(), id, offset, 1); (err != nil || len(got.Events) == 0) && !s.moving(r.Context(), id) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\n\n")
	fl.Flush()

	changed := src.Watch(r.Context(), id, s.opts.Poll)
	last := time.Now()
	var checked time.Time
	ending := false
	red := s.opts.Redactor
	for {
		got, err := src.Events(r.Context(), id, offset, 500)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(w, "event: problem\ndata: %s\n\n", jsonString(red.String(err.Error())))
			fl.Flush()
		}
		for i, ev := range got.Events {
			row := eventRowOf(ev)
			se := streamEvent{eventRow: row, Clock: row.Time.Local().Format("15:04:05"), Run: ev.Kind == "run_end", Row: inTimeline(ev)}
			if d, ok := events.As[events.LLMProgress](ev); ok {
				se.Stream = d.Text
			}
			data, _ := json.Marshal(redact.MapStrings(se, termsafe.String))
			if i == len(got.Events)-1 {
				fmt.Fprintf(w, "id: %d\n", got.Next)
			}
			fmt.Fprintf(w, "data: %s\n\n", red.JSON(data))
		}
		if len(got.Events) > 0 {
			fl.Flush()
			last = time.Now()
		}
		if got.Next > offset {
			offset = got.Next
			continue // more may be waiting: read on before sleeping
		}
		// Read to the end: a run that nothing moves any more (finished,
		// paused, crashed) writes no more events, so the stream ends, after
		// one more read for what it wrote as it stopped.
		if ending {
			fmt.Fprint(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return
		}
		if time.Since(checked) >= time.Second {
			checked = time.Now()
			if ending = !s.moving(r.Context(), id); ending {
				continue
			}
		}
		if time.Since(last) > heartbeat {
			fmt.Fprint(w, ": still here\n\n")
			fl.Flush()
			last = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-changed:
		}
	}
}

// runStored reports whether the run has checkpoints or events.
func (s *Server) runStored(ctx context.Context, id string) bool {
	if store, err := s.store(); err == nil {
		if r := store.Get(ctx, id); !errors.Is(r.Err, graph.ErrRunNotFound) {
			return true
		}
	}
	got, err := s.source().Events(ctx, id, 0, 1)
	return err == nil && (len(got.Events) > 0 || got.Next > 0)
}

// moving reports whether something still writes the run's events: a process
// holds it, a resume started here is under way, or work for it is queued.
func (s *Server) moving(ctx context.Context, id string) bool {
	if rs := s.resumeStatus(id); rs != nil && rs.Running {
		return true
	}
	if s.source().Queued(ctx, id) {
		return true
	}
	store, err := s.store()
	if err != nil {
		return false
	}
	return store.Active(ctx, id)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
