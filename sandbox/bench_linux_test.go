package sandbox

import (
	"context"
	"testing"
)

// BenchmarkConfinedTrue measures what the sandbox adds to one command: the
// helper's start (a re-exec of the binary), the namespaces, Landlock, and
// the private temp dir, against the same start of `true` unconfined.
func BenchmarkConfinedTrue(b *testing.B) {
	for _, mode := range []string{"unconfined", "landlock alone", "landlock and namespaces"} {
		b.Run(mode, func(b *testing.B) {
			cfg := Config{CacheDir: b.TempDir()}
			if mode == "unconfined" {
				cfg.Mode = ModeOff
			}
			box, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer box.Close()
			if mode != "unconfined" {
				requireSandbox(b, mode == "landlock and namespaces")
			}
			if mode == "landlock alone" {
				box.level.Namespaces = false
			}
			dir := b.TempDir()
			for b.Loop() {
				cmd, cleanup, err := box.Command(context.Background(), Spec{Dir: dir}, "true")
				if err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				cleanup()
			}
		})
	}
}
