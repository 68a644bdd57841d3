package phoenix

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

// DefaultProject is where spans go when their resource names no project
// (the resource attribute openinference.project.name).
const DefaultProject = "default"

// restSpan is a span as GET /v1/projects/{project}/spans returns it.
type restSpan struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Context struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	} `json:"context"`
	Kind          string         `json:"span_kind"`
	ParentID      string         `json:"parent_id"`
	StartTime     time.Time      `json:"start_time"`
	EndTime       time.Time      `json:"end_time"`
	StatusCode    string         `json:"status_code"`
	StatusMessage string         `json:"status_message"`
	Attributes    map[string]any `json:"attributes"`
	Events        []struct {
		Name       string         `json:"name"`
		Timestamp  time.Time      `json:"timestamp"`
		Attributes map[string]any `json:"attributes"`
	} `json:"events"`
}

// Span is a span Phoenix stored, in the receiver's terms, with Phoenix's own
// id (the UI selects a span by it) and its span kind (LLM for a model call
// it recognised, UNKNOWN otherwise).
type Span struct {
	otlptest.Span
	NodeID      string
	PhoenixKind string
}

// Spans reads every span of a project. Integer attributes come back as
// int64, as OTLP has them.
func (s *Server) Spans(ctx context.Context, project string) ([]Span, error) {
	var out []Span
	cursor := ""
	for {
		q := url.Values{"limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Data       []restSpan `json:"data"`
			NextCursor *string    `json:"next_cursor"`
		}
		if err := s.get(ctx, "/v1/projects/"+url.PathEscape(project)+"/spans?"+q.Encode(), &page); err != nil {
			return nil, err
		}
		for _, r := range page.Data {
			sp := Span{NodeID: r.ID, PhoenixKind: r.Kind, Span: otlptest.Span{
				TraceID: r.Context.TraceID, SpanID: r.Context.SpanID, ParentID: r.ParentID, Name: r.Name,
				Start: r.StartTime, End: r.EndTime, Attrs: flatten(r.Attributes),
				StatusCode: "STATUS_CODE_" + strings.ToUpper(r.StatusCode), StatusMessage: r.StatusMessage,
			}}
			for _, e := range r.Events {
				sp.Events = append(sp.Events, otlptest.Event{Name: e.Name, Time: e.Timestamp, Attrs: flatten(e.Attributes)})
			}
			out = append(out, sp)
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out, nil
		}
		cursor = *page.NextCursor
	}
}

// WaitSpans polls until done accepts the project's spans stored so far
// (Phoenix stores what it receives in the background) or ctx ends.
func (s *Server) WaitSpans(ctx context.Context, project string, done func([]Span) bool) ([]Span, error) {
	for {
		spans, err := s.Spans(ctx, project)
		if err == nil && done(spans) {
			return spans, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("%d spans stored; not all that were expected", len(spans))
			}
			return spans, fmt.Errorf("phoenix: waiting for the spans: %w", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ProjectID is the id of a project in Phoenix's UI addresses.
func (s *Server) ProjectID(ctx context.Context, project string) (string, error) {
	var list struct {
		Data []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := s.get(ctx, "/v1/projects", &list); err != nil {
		return "", err
	}
	for _, p := range list.Data {
		if p.Name == project {
			return p.ID, nil
		}
	}
	return "", fmt.Errorf("phoenix: no project %q", project)
}

// TraceURL is the UI's page of one trace, with one span selected.
func (s *Server) TraceURL(projectID, traceID, spanNodeID string) string {
	u := s.URL + "/projects/" + url.PathEscape(projectID) + "/traces/" + url.PathEscape(traceID)
	if spanNodeID != "" {
		u += "?selectedSpanNodeId=" + url.QueryEscape(spanNodeID)
	}
	return u
}

func (s *Server) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("phoenix: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("phoenix: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("phoenix: GET %s: %s: %.300s", path, resp.Status, body)
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("phoenix: GET %s: %w", path, err)
	}
	return nil
}

// flatten turns nested attribute objects into dotted keys (Phoenix nests
// some) and JSON numbers into int64 or float64.
func flatten(m map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(strings.TrimPrefix(prefix+"."+k, "."), e)
			}
		default:
			out[prefix] = scalar(v)
		}
	}
	walk("", m)
	return out
}

func scalar(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scalar(e)
		}
		return out
	}
	return v
}
