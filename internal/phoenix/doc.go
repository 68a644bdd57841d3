// Package phoenix runs Arize Phoenix, a real OpenTelemetry trace receiver
// with a web UI, for the trace tests: `phoenix serve` from the Python virtual
// environment scripts/phoenix.sh installs in .tools/phoenix, bound to
// loopback on free ports, its data in a temporary folder. It reads the spans
// back through Phoenix's REST API and looks at its UI with headless
// Chromium. Linux only, as the tests that use it.
package phoenix
