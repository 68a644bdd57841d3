package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
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
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\n\n")
	fl.Flush()

	src := s.source()
	changed := src.Watch(r.Context(), id, s.opts.Poll)
	last := time.Now()
	for {
		got, err := src.Events(r.Context(), id, offset, 500)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(w, "event: problem\ndata: %s\n\n", jsonString(err.Error()))
			fl.Flush()
		}
		for i, ev := range got.Events {
			row := eventRowOf(ev)
			se := streamEvent{eventRow: row, Clock: row.Time.Local().Format("15:04:05"), Run: ev.Kind == "run_end", Row: inTimeline(ev)}
			if ev.Name == "llm_progress" {
				var d struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(ev.Data, &d)
				se.Stream = d.Text
			}
			data, _ := json.Marshal(se)
			if i == len(got.Events)-1 {
				fmt.Fprintf(w, "id: %d\n", got.Next)
			}
			fmt.Fprintf(w, "data: %s\n\n", data)
		}
		if len(got.Events) > 0 {
			fl.Flush()
			last = time.Now()
		}
		if got.Next > offset {
			offset = got.Next
			continue // more may be waiting: read on before sleeping
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

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
