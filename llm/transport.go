package llm

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// maxCapture bounds the response bytes kept per call.
const maxCapture = 1 << 20

// capture keeps what the client libraries throw away: the status, headers
// and raw body of the last response of one call. go-openai drops OpenRouter's
// usage.cost and error metadata, and neither library says whether a stream
// ended with its end marker.
type capture struct {
	mu     sync.Mutex
	status int
	header http.Header
	body   bytes.Buffer
	tail   []byte // last bytes seen, kept even past maxCapture
	// readErr is the first failed read of the body other than its clean
	// end: a dropped connection, which a client library may take for EOF.
	readErr error
}

// ReadErr is the error that cut the body short, nil when it ended cleanly.
func (c *capture) ReadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

func (c *capture) Status() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *capture) Header() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.header == nil {
		return http.Header{}
	}
	return c.header
}

func (c *capture) Body() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.body.Bytes()...)
}

func (c *capture) Tail() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.tail...)
}

func (c *capture) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := maxCapture - c.body.Len(); room > 0 {
		c.body.Write(p[:min(len(p), room)])
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 64 {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-64:]...)
	}
}

// captureTransport records each response into cap as the client reads it.
type captureTransport struct {
	base http.RoundTripper
	cap  *capture
}

func (t *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.cap.mu.Lock()
	t.cap.status, t.cap.header = resp.StatusCode, resp.Header.Clone()
	t.cap.body.Reset()
	t.cap.tail = t.cap.tail[:0]
	t.cap.readErr = nil
	t.cap.mu.Unlock()
	resp.Body = &teeBody{rc: resp.Body, cap: t.cap}
	return resp, nil
}

type teeBody struct {
	rc  io.ReadCloser
	cap *capture
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.cap.write(p[:n])
	}
	if err != nil && err != io.EOF {
		b.cap.mu.Lock()
		if b.cap.readErr == nil {
			b.cap.readErr = err
		}
		b.cap.mu.Unlock()
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// headerTransport adds fixed headers (OpenRouter's attribution) to requests.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		if v != "" && req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}

// transportOf returns c's transport, or the default one.
func transportOf(c *http.Client) http.RoundTripper {
	if c != nil && c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// capturingClient is a per-call client over the shared transport.
func capturingClient(base http.RoundTripper, cap *capture) *http.Client {
	return &http.Client{Transport: &captureTransport{base: base, cap: cap}}
}
