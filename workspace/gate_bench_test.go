package workspace

import (
	"testing"

	"github.com/lemmings-dev/lemmings/sandbox"
)

// BenchmarkRunGateTrue is the cost of one gate around the command itself:
// `true` unconfined (sandbox.mode: off) against `true` in the sandbox
// (Landlock and namespaces where the machine has them). No model call.
func BenchmarkRunGateTrue(b *testing.B) {
	for _, mode := range []sandbox.Mode{sandbox.ModeOff, sandbox.ModeAuto} {
		b.Run(string(mode), func(b *testing.B) {
			box, err := sandbox.New(sandbox.Config{Mode: mode, CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer box.Close()
			dir := b.TempDir()
			for b.Loop() {
				if r := RunGate(bg(), box, dir, Gate{Name: "true", Command: "true"}, 0); !r.Passed {
					b.Fatalf("%+v", r)
				}
			}
			b.ReportMetric(0, "model_calls/op")
		})
	}
}
