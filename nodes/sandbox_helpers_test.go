package nodes

import (
	"testing"

	"github.com/lemmings-dev/lemmings/sandbox"
)

// sandboxWith is the default sandbox with more writable paths: a test's
// gate or fake CLI records what it did outside the work tree.
func sandboxWith(t *testing.T, writable ...string) *sandbox.Box {
	t.Helper()
	b, err := sandbox.New(sandbox.Config{Writable: writable})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
