package workspace

// The tests run confined commands: this test binary is the sandbox's helper
// too (as the lemmings binary is, through main).
import _ "github.com/lemmings-dev/lemmings/sandbox/helper"
