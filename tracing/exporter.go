package tracing

import (
	"context"
	"errors"
	"strconv"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exporter passes spans on and keeps the first failure (and how many spans
// it lost) for the warning at the end of the run, instead of letting the SDK
// print it to stderr in the middle of the run's output.
type exporter struct {
	next sdktrace.SpanExporter

	mu    sync.Mutex
	first error
	lost  int
}

func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.next.ExportSpans(ctx, spans); err != nil {
		e.mu.Lock()
		if e.first == nil {
			e.first = err
		}
		e.lost += len(spans)
		e.mu.Unlock()
	}
	return nil
}

func (e *exporter) Shutdown(ctx context.Context) error { return e.next.Shutdown(ctx) }

// err says how many spans were lost and why.
func (e *exporter) err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		return nil
	}
	return errors.Join(errors.New(plural(e.lost, "span")+" not delivered"), e.first)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
