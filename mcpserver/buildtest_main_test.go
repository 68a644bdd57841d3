package mcpserver

import (
	"testing"

	"github.com/lemmings-dev/lemmings/internal/buildtest"
)

// TestMain removes the binaries the tests built (58 MB a run, left in the
// temp folder otherwise: a day of test runs filled a disk).
func TestMain(m *testing.M) { buildtest.Main(m) }
