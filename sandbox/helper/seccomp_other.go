//go:build linux && !amd64 && !arm64

package helper

// No filter is written for this architecture: UNIX sockets stay open below
// Landlock ABI 9 (Level.UnixSockets says so).
var (
	seccompNative seccompArch
	seccompCompat *seccompArch
)
