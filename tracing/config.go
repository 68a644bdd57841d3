package tracing

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// DefaultEndpoint is where spans go when neither the configuration nor the
// environment names an endpoint: an OpenTelemetry collector (or Jaeger) on
// this machine.
const DefaultEndpoint = "http://localhost:4318/v1/traces"

// tracesPath ends an OTLP/HTTP traces URL.
const tracesPath = "/v1/traces"

// Config says whether and where a run's spans go.
type Config struct {
	Enabled bool
	// Endpoint is the OTLP/HTTP endpoint, read as OTEL_EXPORTER_OTLP_ENDPOINT
	// is: a base URL to which /v1/traces is added (kept when already there).
	// Empty: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as it is), then
	// OTEL_EXPORTER_OTLP_ENDPOINT, then DefaultEndpoint.
	Endpoint string
	// Offline: spans go only to an endpoint on the loopback interface.
	Offline bool
	// Prompts records prompts and replies on model-call spans, redacted.
	Prompts bool
	// Getenv reads the environment (nil: os.Getenv); tests replace it.
	Getenv func(string) string
}

// endpoint resolves the traces URL and says where it came from.
func (c Config) endpoint(getenv func(string) string) (u, origin string, err error) {
	switch {
	case strings.TrimSpace(c.Endpoint) != "":
		u, origin = withTracesPath(c.Endpoint), "tracing.endpoint"
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		u, origin = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		u, origin = withTracesPath(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), "OTEL_EXPORTER_OTLP_ENDPOINT"
	default:
		return DefaultEndpoint, "the default", nil
	}
	p, perr := url.Parse(strings.TrimSpace(u))
	if perr != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", origin, fmt.Errorf("%s is %q: not an http:// or https:// URL (for example http://localhost:4318)", origin, u)
	}
	return p.String(), origin, nil
}

// withTracesPath adds /v1/traces to a base URL, as the OTLP exporters do with
// OTEL_EXPORTER_OTLP_ENDPOINT.
func withTracesPath(base string) string {
	base = strings.TrimSpace(base)
	if strings.HasSuffix(strings.TrimRight(base, "/"), tracesPath) {
		return base
	}
	return strings.TrimRight(base, "/") + tracesPath
}

// IsLoopback reports whether a URL's host is this machine's loopback
// interface (localhost, 127.0.0.0/8, ::1): the only endpoints an offline run
// sends spans to.
func IsLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
