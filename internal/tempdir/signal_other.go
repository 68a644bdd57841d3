//go:build !unix

package tempdir

import "os"

// Without signals a folder's owner is never known gone: nothing is swept.
func signalZero(*os.Process) error { return nil }
