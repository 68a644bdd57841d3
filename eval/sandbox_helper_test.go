package eval

// The tests run confined commands: this test binary is the sandbox's helper
// too (as the lemmings binary is, through main).
import (
	"testing"

	"github.com/lemmings-dev/lemmings/sandbox"
	_ "github.com/lemmings-dev/lemmings/sandbox/helper"
)

// testBox is a sandbox of the default configuration for one test.
func testBox(t testing.TB) *sandbox.Box {
	t.Helper()
	b, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
