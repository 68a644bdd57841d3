package mcpserver

import (
	"os"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/buildtest"
)

// TestMain removes the binaries the tests built (tens of MB a run, left in
// the temp folder otherwise: a day of test runs filled a disk).
func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.RemoveAll()
	os.Exit(code)
}
