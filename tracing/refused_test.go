package tracing_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/tracing"
)

// A collector that is down (a closed loopback port) is named as such in the
// warning, with its address: not as a deadline the flush ran into.
func TestACollectorThatIsDownIsNamedWithItsAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	w := newWorld(t)
	var warn bytes.Buffer
	tr, err := tracing.Start(context.Background(), tracing.Config{Enabled: true, Endpoint: "http://" + addr,
		Getenv: func(string) string { return "" }}, tracing.RunInfo{RunID: "r1"}, &warn)
	if err != nil || tr == nil {
		t.Fatalf("Start: %v, %v", tr, err)
	}
	if _, err := w.app(t, tr).Run(tr.Attach(context.Background()), "r1", state{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_ = tr.Close(context.Background())
	got := warn.String()
	if !strings.Contains(got, "connection refused at "+addr) || strings.Contains(got, "deadline exceeded") {
		t.Errorf("warning %q, want it to say connection refused at %s", got, addr)
	}
	if d := time.Since(t0); d > 7*time.Second {
		t.Errorf("Close took %v", d)
	}
}
