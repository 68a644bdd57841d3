package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpClient sends spans as OTLP over HTTP (protobuf), reading the standard
// OTEL_EXPORTER_OTLP_[TRACES_]{HEADERS,TIMEOUT,COMPRESSION,CERTIFICATE,
// CLIENT_CERTIFICATE,CLIENT_KEY} variables. It stands in for the official
// otlptracehttp client, which links all of gRPC through the OTLP collector
// package it shares with the gRPC exporter (+5.3 MB to the binary); the
// conversion of spans to OTLP stays the official exporter's (otlptrace).
type otlpClient struct {
	url         string
	headers     map[string]string
	timeout     time.Duration
	gzip        bool
	http        *http.Client
	maxElapsed  time.Duration
	backoffBase time.Duration

	mu   sync.Mutex
	last error // the latest failure to reach the collector; nil after a success
}

// failure is the latest failure to reach the collector (nil after a
// success): what a flush cut short by its deadline was up against.
func (c *otlpClient) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// unreachable is a collector that could not be reached, said in a few words
// with its address (the transport's error stays underneath).
type unreachable struct {
	what string
	err  error
}

func (u *unreachable) Error() string { return u.what }
func (u *unreachable) Unwrap() error { return u.err }

// describe says why the collector at rawURL did not take a request.
func describe(rawURL string, timeout time.Duration, err error) error {
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil && u.Host != "" {
		host = u.Host
		if u.Port() == "" && u.Scheme == "https" {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	var dns *net.DNSError
	var nerr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &unreachable{fmt.Sprintf("connection refused at %s: no trace collector listens there (start it, or point tracing.endpoint elsewhere)", host), err}
	case errors.As(err, &dns):
		return &unreachable{fmt.Sprintf("no such host %s (tracing.endpoint or OTEL_EXPORTER_OTLP_ENDPOINT)", dns.Name), err}
	case errors.As(err, &nerr) && nerr.Timeout():
		return &unreachable{fmt.Sprintf("no answer from %s within %s (OTEL_EXPORTER_OTLP_TIMEOUT)", host, timeout), err}
	}
	return err
}

// The retryable answers of the OTLP/HTTP specification.
var retryable = map[int]bool{http.StatusTooManyRequests: true, http.StatusBadGateway: true,
	http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true}

// newOTLPClient configures a client for endpoint from the environment.
func newOTLPClient(endpoint string, getenv func(string) string) (*otlpClient, error) {
	env := func(name string) string { // the traces variable wins over the generic one
		if v := getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
			return v
		}
		return getenv("OTEL_EXPORTER_OTLP_" + name)
	}
	c := &otlpClient{url: endpoint, headers: map[string]string{}, timeout: 10 * time.Second,
		maxElapsed: retryDuration, backoffBase: 500 * time.Millisecond}
	if h := env("HEADERS"); h != "" {
		for _, kv := range strings.Split(h, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %q is not key=value", kv)
			}
			val, err := url.PathUnescape(v)
			if err != nil {
				return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: the value of %s: %w", k, err)
			}
			c.headers[k] = strings.TrimSpace(val)
		}
	}
	if t := env("TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT is %q: want milliseconds, such as 10000", t)
		}
		c.timeout = time.Duration(ms) * time.Millisecond
	}
	switch comp := env("COMPRESSION"); comp {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION is %q: gzip or none", comp)
	}
	tlsConf, err := tlsFromEnv(env)
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConf
	c.http = &http.Client{Transport: transport}
	return c, nil
}

// tlsFromEnv reads the CA and client certificate variables; nil when unset.
func tlsFromEnv(env func(string) string) (*tls.Config, error) {
	ca, cert, key := env("CERTIFICATE"), env("CLIENT_CERTIFICATE"), env("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: no PEM certificate in %s", ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, errors.New("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: %w", err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

func (c *otlpClient) Start(context.Context) error { return nil }

func (c *otlpClient) Stop(context.Context) error {
	c.http.CloseIdleConnections()
	return nil
}

// UploadTraces posts one ExportTraceServiceRequest, retrying what the
// specification calls retryable (and a connection that failed) with backoff
// for up to maxElapsed, or until ctx ends.
func (c *otlpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	body, err := exportRequest(spans)
	if err != nil {
		return err
	}
	if c.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		body = buf.Bytes()
	}
	deadline := time.Now().Add(c.maxElapsed)
	wait := c.backoffBase
	for {
		retry, after, err := c.post(ctx, body)
		if err == nil || !retry {
			return err
		}
		if after > 0 {
			wait = after
		}
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err // the collector's failure, not the deadline that ended the retries
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// post sends body once: whether a failure may be retried, and after how long
// the server asked for.
func (c *otlpClient) post(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "lemmings-otlp")
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, 0, err
		}
		err = describe(c.url, c.timeout, err)
		c.fail(err)
		// Refused, reset, timed out: the collector may be back soon. A
		// certificate it cannot be trusted with will not change.
		var verr *tls.CertificateVerificationError
		return !errors.As(err, &verr), 0, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 == 2 {
		c.fail(nil)
		return false, 0, nil
	}
	err = fmt.Errorf("%s answered %s: %s", c.url, resp.Status, strings.TrimSpace(string(msg)))
	c.fail(err)
	if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
		after = time.Duration(s) * time.Second
	}
	return retryable[resp.StatusCode], after, err
}

func (c *otlpClient) fail(err error) {
	c.mu.Lock()
	c.last = err
	c.mu.Unlock()
}

// exportRequest encodes an ExportTraceServiceRequest: field 1, each
// ResourceSpans as a length-delimited message (the message is nothing else,
// so its own generated type, and the gRPC service beside it, are not needed).
func exportRequest(spans []*tracepb.ResourceSpans) ([]byte, error) {
	var out []byte
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}
