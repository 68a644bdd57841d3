// Package nohelper's test is a binary that links package sandbox without its
// helper, as a program wired wrongly would.
package nohelper

import (
	"errors"
	"runtime"
	"testing"

	"github.com/lemmings-dev/lemmings/sandbox"
)

func TestABinaryWithoutTheHelperCannotConfine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux starts the helper")
	}
	for _, mode := range []sandbox.Mode{sandbox.ModeAuto, sandbox.ModeRequired} {
		if _, err := sandbox.New(sandbox.Config{Mode: mode}); !errors.Is(err, sandbox.ErrNoHelper) {
			t.Errorf("mode %s: %v, want ErrNoHelper", mode, err)
		}
	}
	if lvl := sandbox.Probe(); lvl.Landlock != 0 || lvl.Namespaces {
		t.Errorf("the probe started a copy of the test binary as the helper: %+v", lvl)
	}
	// With the sandbox off nothing is re-executed: no helper needed.
	b, err := sandbox.New(sandbox.Config{Mode: sandbox.ModeOff})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}
