package llm

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RetryPolicy says how transient faults are retried. Zero fields take the
// defaults: 4 attempts, 1s initial backoff doubling to at most 30s, and a
// Retry-After of at most 2 minutes honoured (a longer one fails at once).
type RetryPolicy struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	MaxRetryAfter  time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = time.Second
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 30 * time.Second
	}
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = p.InitialBackoff
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 2 * time.Minute
	}
	return p
}

// backoff is the wait before retry number n (1-based): exponential with
// "equal jitter" (half fixed, half random) so parallel callers spread out.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.InitialBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// wait is the pause before retry n after err; ok is false when the server
// asked for a longer pause than the policy accepts.
func (p RetryPolicy) wait(n int, e *Error) (time.Duration, bool) {
	if e.RetryAfter > 0 {
		if e.RetryAfter > p.MaxRetryAfter {
			return 0, false
		}
		// Honour it, with up to 10% more so parallel callers do not return
		// in lockstep.
		return e.RetryAfter + time.Duration(rand.Int64N(int64(e.RetryAfter/10)+1)), true
	}
	return p.backoff(n), true
}

// Clock is the time source of retries, injectable so tests need not wait.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, returning ctx's error in that case.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// statusKind maps an HTTP status to a kind and whether to retry it.
func statusKind(status int) (ErrorKind, bool) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindAuth, false
	case status == http.StatusPaymentRequired:
		return KindQuota, false
	case status == http.StatusNotFound:
		return KindModelNotFound, false
	case status == http.StatusRequestTimeout:
		return KindTimeout, true
	case status == http.StatusTooManyRequests:
		return KindRateLimited, true
	case status >= 500:
		return KindServer, true
	default:
		return KindBadRequest, false
	}
}

// transportError classifies an error that came before or instead of an HTTP
// response: refused connections, DNS failures, resets, cut bodies. ok is
// false when err is none of those.
func transportError(err error) (*Error, bool) {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return &Error{Kind: KindUnavailable, Retriable: true, Err: err}, true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return &Error{Kind: KindUnavailable, Retriable: true, Err: err}, true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: KindStreamCut, Retriable: true, Err: err}, true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Retriable: true, Err: err}, true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return &Error{Kind: KindUnavailable, Retriable: true, Err: err}, true
	}
	return nil, false
}
