//go:build race

package redact

// raceEnabled: the race detector slows gitleaks' regular expressions about
// a hundredfold; single-goroutine measurements skip under it (make test runs
// them in its plain pass).
const raceEnabled = true
