package tracing_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/tracing"
	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func oneSpan(t *testing.T, cfg tracing.Config) (*tracing.Run, error) {
	t.Helper()
	cfg.Enabled = true
	tr, err := tracing.Start(context.Background(), cfg, tracing.RunInfo{RunID: "r1"}, &bytes.Buffer{})
	if err != nil {
		return nil, err
	}
	tr.Handle(graph.Event{Kind: graph.EventRunEnd, Status: graph.StatusDone, Time: time.Now()})
	return tr, tr.Close(context.Background())
}

func TestTheStandardVariablesShapeTheExport(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	_, err := oneSpan(t, tracing.Config{Getenv: envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":         rcv.URL(),
		"OTEL_EXPORTER_OTLP_HEADERS":          "Authorization=Basic%20cGs6c2s=,x-other=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":   "x-langfuse-ingestion-version=4", // the traces variable wins
		"OTEL_EXPORTER_OTLP_COMPRESSION":      "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":   "3000",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":  "http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_INSECURE":  "true",
		"OTEL_EXPORTER_OTLP_SOMETHING_ELSE":   "ignored",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT_": "ignored",
	})})
	if err != nil {
		t.Fatal(err)
	}
	h := rcv.Header()
	if h.Get("X-Langfuse-Ingestion-Version") != "4" || h.Get("Authorization") != "" || h.Get("Content-Encoding") != "gzip" ||
		h.Get("Content-Type") != "application/x-protobuf" || len(rcv.Spans()) != 1 {
		t.Errorf("header %v, %d spans", h, len(rcv.Spans()))
	}
	if _, err := oneSpan(t, tracing.Config{Getenv: envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL(), "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic%20cGs6c2s=",
	})}); err != nil {
		t.Fatal(err)
	}
	if got := rcv.Header().Get("Authorization"); got != "Basic cGs6c2s=" {
		t.Errorf("Authorization %q", got)
	}
}

func TestBadExportVariablesSayWhichAndWhy(t *testing.T) {
	for name, value := range map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":     "Authorization",
		"OTEL_EXPORTER_OTLP_TIMEOUT":     "10s",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd",
		"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem",
	} {
		_, err := oneSpan(t, tracing.Config{Endpoint: "http://127.0.0.1:1", Getenv: envOf(map[string]string{name: value})})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, value, err)
		}
	}
}

func TestABusyCollectorIsAskedAgain(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	rcv.Fail(http.StatusServiceUnavailable, "1")
	go func() {
		time.Sleep(300 * time.Millisecond)
		rcv.Fail(0, "")
	}()
	t0 := time.Now()
	if _, err := oneSpan(t, tracing.Config{Endpoint: rcv.URL(), Getenv: envOf(nil)}); err != nil {
		t.Fatal(err)
	}
	if len(rcv.Spans()) != 1 || rcv.Requests() < 2 || time.Since(t0) < time.Second {
		t.Errorf("%d spans after %d requests in %v (Retry-After: 1 s)", len(rcv.Spans()), rcv.Requests(), time.Since(t0))
	}
}

func TestACollectorBehindTLSWithItsOwnCA(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" {
			got.Add(1)
		}
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := oneSpan(t, tracing.Config{Endpoint: srv.URL, Getenv: envOf(map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": ca})}); err != nil || got.Load() != 1 {
		t.Errorf("with the CA: %v, %d exports", err, got.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	tr, err := tracing.Start(ctx, tracing.Config{Enabled: true, Endpoint: srv.URL, Getenv: envOf(nil)}, tracing.RunInfo{RunID: "r"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without it: %v", err)
	}
}

func TestTheResourceTakesTheServiceNameAndAttributesFromTheEnvironment(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "lemmings-ci")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=lemmings,deployment.environment=test")
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	if _, err := oneSpan(t, tracing.Config{Endpoint: rcv.URL(), Getenv: envOf(nil)}); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	res := spans[0].Resource
	if res["service.name"] != "lemmings-ci" || res["openinference.project.name"] != "lemmings" || res["deployment.environment"] != "test" || res["telemetry.sdk.language"] != "go" {
		t.Errorf("resource %v", res)
	}
}
