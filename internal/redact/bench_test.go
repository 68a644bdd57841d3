package redact

import (
	"strings"
	"testing"
)

// BenchmarkOutputs measures what one redaction costs at the outputs that
// redact a line at a time: a progress line, an event of --json or SSE, a
// kilobyte of gate output, and a checkpoint's state; each with the
// process's taught values (a dozen, as LearnEnv finds) in place.
func BenchmarkOutputs(b *testing.B) {
	r := New()
	for i := range 12 {
		r.Learn("$KEY", strings.Repeat(string(rune('a'+i)), 4)+"Zq8xW2vR7tY1u9")
	}
	progress := "[   1m02s]   gate go test FAILED (exit 1)"
	event := `{"kind":"custom","name":"gate","run_id":"20260101-101010-abcdef","time":"2026-01-01T10:10:10Z","data":{"gate":"go test","passed":false,"exit_code":1,"output":"--- FAIL: TestX (0.00s)\n    x_test.go:12: want 2, got 3\nFAIL"}}`
	kb := strings.Repeat("--- FAIL: TestParse (0.01s)\n    parse_test.go:41: token count 3, want 4\n", 14)
	state := `{"remit":"add a --json flag","milestones":[` + strings.Repeat(`{"id":"M1","goal":"make the list command print JSON when asked","status":"active","tasks":[{"title":"add the flag","instructions":"edit cmd/list.go: add --json, print with encoding/json"}]},`, 20) + `{}]}`
	for _, c := range []struct {
		name string
		run  func()
		size int
	}{
		{"progress-line", func() { r.String(progress) }, len(progress)},
		{"json-event", func() { r.JSON([]byte(event)) }, len(event)},
		{"gate-output-1KB", func() { r.String(kb) }, len(kb)},
		{"gate-output-1KB-unseen", func() { rules(kb) }, len(kb)},
		{"state-json", func() { r.JSON([]byte(state)) }, len(state)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(c.size))
			for b.Loop() {
				c.run()
			}
		})
	}
}
