package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// wireCall is one request that went through the recording proxy, and its
// response as the server sent it.
type wireCall struct {
	Method, Path string
	ReqBody      []byte
	Req          map[string]any // ReqBody decoded; nil when it is not a JSON object
	Status       int
	ContentType  string
	RespBody     []byte
}

// option is the request's options[name] as an integer (-1 when absent).
func (c wireCall) option(name string) int {
	opts, _ := c.Req["options"].(map[string]any)
	return jsonIntOr(opts[name], -1)
}

// lines decodes the response: one object per NDJSON line, or the one JSON
// object of a non-streamed reply.
func (c wireCall) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(c.RespBody))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s answered a line that is not a JSON object (%v): %s", c.Path, err, textutil.Clip(string(line), 200))
		}
		out = append(out, m)
	}
	return out
}

// wireLog is what went through a recording proxy, in order. Readers wait
// for the calls in flight: a client may act on a response before the proxy
// has finished recording it.
type wireLog struct {
	mu      sync.Mutex
	done    *sync.Cond
	list    []wireCall
	pending int
}

func newWireLog() *wireLog {
	w := &wireLog{}
	w.done = sync.NewCond(&w.mu)
	return w
}

// begin reserves the next entry for a call in flight.
func (w *wireLog) begin() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending++
	w.list = append(w.list, wireCall{})
	return len(w.list) - 1
}

// finish fills entry i in.
func (w *wireLog) finish(i int, c wireCall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list[i] = c
	w.pending--
	w.done.Broadcast()
}

func (w *wireLog) all() []wireCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.pending > 0 {
		w.done.Wait()
	}
	return append([]wireCall(nil), w.list...)
}

func (w *wireLog) len() int { return len(w.all()) }

// since returns the calls to path after the first mark calls.
func (w *wireLog) since(mark int, path string) []wireCall {
	var out []wireCall
	for _, c := range w.all()[mark:] {
		if c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

func (w *wireLog) calls(path string) []wireCall { return w.since(0, path) }

// one returns the only call to path, failing the test otherwise.
func (w *wireLog) one(t *testing.T, path string) wireCall {
	t.Helper()
	cs := w.calls(path)
	if len(cs) != 1 {
		t.Fatalf("%d requests to %s, want 1: %v", len(cs), path, w.summary())
	}
	return cs[0]
}

// numCtx lists the num_ctx of every chat request.
func (w *wireLog) numCtx() []int {
	var out []int
	for _, c := range w.calls("/api/chat") {
		out = append(out, c.option("num_ctx"))
	}
	return out
}

func (w *wireLog) summary() []string {
	var out []string
	for _, c := range w.all() {
		out = append(out, fmt.Sprintf("%s %s → %d", c.Method, c.Path, c.Status))
	}
	return out
}

// recordingProxy starts a reverse proxy to target that records every request
// and response (streams pass through as they come). It stops with the test.
func recordingProxy(t *testing.T, target string) (string, *wireLog) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	log := newWireLog()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := log.begin()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &teeWriter{ResponseWriter: w, status: http.StatusOK}
		// Deferred: the proxy panics with http.ErrAbortHandler when the
		// server cuts a response short, and that call must be recorded too.
		defer func() {
			c := wireCall{Method: r.Method, Path: r.URL.Path, ReqBody: body, Status: rec.status,
				ContentType: rec.Header().Get("Content-Type"), RespBody: rec.body.Bytes()}
			if json.Unmarshal(body, &c.Req) != nil {
				c.Req = nil
			}
			log.finish(i, c)
		}()
		rp.ServeHTTP(rec, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, log
}

// teeWriter passes a response through and keeps a copy.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
