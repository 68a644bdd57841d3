// Package otlptest is an OTLP/HTTP trace receiver on the loopback interface
// for tests: it decodes what an exporter really sends (protobuf, gzip or
// not) and keeps the spans for the test to inspect.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"time"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, its ids in hex and its attributes as Go values
// (string, bool, int64, float64, []any).
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Kind                      string // SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT…
	Start, End                time.Time
	Attrs                     map[string]any
	Resource                  map[string]any
	StatusCode                string // STATUS_CODE_UNSET, _OK, _ERROR
	StatusMessage             string
	Events                    []Event
}

// Event is one span event.
type Event struct {
	Name  string
	Time  time.Time
	Attrs map[string]any
}

// Receiver serves POST /v1/traces on 127.0.0.1.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	header   http.Header // of the last export
	status   int         // answer with this status instead of accepting (0: accept)
	retry    string      // the Retry-After sent with it
}

// NewReceiver starts a receiver on a free loopback port.
func NewReceiver() *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's base URL (an OTEL_EXPORTER_OTLP_ENDPOINT).
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Fail makes the receiver answer every export with status (0: accept
// again), and a Retry-After of retryAfter when it is not empty.
func (r *Receiver) Fail(status int, retryAfter string) {
	r.mu.Lock()
	r.status, r.retry = status, retryAfter
	r.mu.Unlock()
}

// Header is the last export's request header.
func (r *Receiver) Header() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.header.Clone()
}

// Requests counts the export requests received.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Spans returns the spans received so far, ordered by start time.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	out := append([]Span(nil), r.spans...)
	r.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "only POST /v1/traces", http.StatusNotFound)
		return
	}
	r.mu.Lock()
	r.requests++
	r.header = req.Header.Clone()
	status, retry := r.status, r.retry
	r.mu.Unlock()
	if status != 0 {
		if retry != "" {
			w.Header().Set("Retry-After", retry)
		}
		http.Error(w, "told to fail", status)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "Content-Type "+ct+": only application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	msg, err := decodeRequest(data)
	if err != nil {
		http.Error(w, fmt.Sprintf("not an ExportTraceServiceRequest: %v", err), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.spans = append(r.spans, spansOf(msg)...)
	r.mu.Unlock()
	// An empty ExportTraceServiceResponse: everything accepted.
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// decodeRequest reads an ExportTraceServiceRequest: its only field, 1, is
// the repeated ResourceSpans; any other field is an error here.
func decodeRequest(data []byte) ([]*tracepb.ResourceSpans, error) {
	var out []*tracepb.ResourceSpans
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		data = data[n:]
		if num != 1 || typ != protowire.BytesType {
			return nil, fmt.Errorf("unexpected field %d (wire type %d)", num, typ)
		}
		b, n := protowire.ConsumeBytes(data)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		data = data[n:]
		var rs tracepb.ResourceSpans
		if err := proto.Unmarshal(b, &rs); err != nil {
			return nil, err
		}
		out = append(out, &rs)
	}
	return out, nil
}

func spansOf(msg []*tracepb.ResourceSpans) []Span {
	var out []Span
	for _, rs := range msg {
		res := attrsOf(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: s.GetKind().String(),
					Start: time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano())),
					Attrs: attrsOf(s.GetAttributes()), Resource: res,
					StatusCode: s.GetStatus().GetCode().String(), StatusMessage: s.GetStatus().GetMessage(),
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, Event{Name: e.GetName(), Time: time.Unix(0, int64(e.GetTimeUnixNano())), Attrs: attrsOf(e.GetAttributes())})
				}
				out = append(out, sp)
			}
		}
	}
	return out
}

func attrsOf(kvs []*common.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = valueOf(kv.GetValue())
	}
	return m
}

func valueOf(v *common.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_BoolValue:
		return x.BoolValue
	case *common.AnyValue_IntValue:
		return x.IntValue
	case *common.AnyValue_DoubleValue:
		return x.DoubleValue
	case *common.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, valueOf(e))
		}
		return out
	default:
		return nil
	}
}
