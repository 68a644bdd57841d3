// Package helper turns the binary that links it into the sandbox's helper:
// started by package sandbox as /proc/self/exe under a reserved argv[0], its
// init sets the confinement up (namespaces, the cache overlays, Landlock, the
// seccomp filter on UNIX sockets) and execs the confined program, before main or any test runs.
//
// Only main links it (cmd/lemmings), and the tests that run confined
// commands, with a blank import:
//
//	import _ "github.com/lemmings-dev/lemmings/sandbox/helper"
//
// A binary without it cannot confine anything: sandbox.New says so rather
// than start a copy of itself that is not the helper.
package helper
