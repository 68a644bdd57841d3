package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// Discard is an OTLP/HTTP endpoint on loopback that accepts every export
// without decoding it, for benchmarks: what it costs to send spans, without
// the receiver's own work.
type Discard struct {
	srv      *httptest.Server
	requests atomic.Int64
	bytes    atomic.Int64
}

// NewDiscard starts a discarding endpoint on a free loopback port.
func NewDiscard() *Discard {
	d := &Discard{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		d.requests.Add(1)
		d.bytes.Add(n)
		// An empty body is an empty ExportTraceServiceResponse: all accepted.
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	return d
}

// URL is the endpoint's base URL.
func (d *Discard) URL() string { return d.srv.URL }

// Close stops it.
func (d *Discard) Close() { d.srv.Close() }

// Requests and Bytes count the exports received and their body bytes.
func (d *Discard) Requests() int64 { return d.requests.Load() }

// Bytes counts the body bytes received.
func (d *Discard) Bytes() int64 { return d.bytes.Load() }
