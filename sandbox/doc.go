// Package sandbox runs model-written code confined: gates, the in-loop
// syntax checks, the eval's test runs and coding CLIs all start their
// process through Box.Command.
//
// On Linux a confined command is started as the lemmings binary itself
// (/proc/self/exe) under a reserved argv[0]; the init function of package
// sandbox/helper recognises it, sets the sandbox up and execs the real
// program, so no second binary is needed. Only main links the helper (and
// the test binaries that run confined commands, with a blank import); New
// refuses to confine in a binary without it (ErrNoHelper). The helper:
//
//   - starts in new user and mount namespaces when the kernel allows them
//     (a private /dev/shm and /dev/pts, the work tree's .git bound
//     read-only, the local servers' tokens under an empty mount, the
//     scope's Go caches laid over the user's), and, for a command without
//     the network, new network and pid namespaces (no network but
//     loopback; a /proc of its own; every process the command left behind
//     dies with it);
//   - applies Landlock to the one thread that then execs the program: the
//     whole file system readable and executable, writes only under the work
//     directory, a private temp dir and home, and the sandbox's caches; TCP
//     denied when there is no network namespace to take the network away;
//     signals and abstract sockets scoped to the sandbox (Landlock ABI 6),
//     pathname UNIX sockets out of reach (ABI 9);
//   - below Landlock ABI 9, adds a seccomp filter on the same thread that
//     takes UNIX sockets away (sandbox/helper/seccomp_linux.go says why and how).
//
// This is Codex's model (Landlock in a re-exec'd helper, network off by
// default) with namespaces where Codex uses seccomp: a network namespace
// keeps loopback working for tests that serve on 127.0.0.1 while the
// outside is unreachable, and a pid namespace reaps what a gate left
// running. Landlock is applied with raw system calls rather than through
// go-landlock: that library restricts every thread of the process through
// libpsx when cgo is on, which hung inside the pid namespace here, and the
// helper needs only the thread that execs.
//
// Where the kernel lacks namespaces the helper applies Landlock alone (TCP
// denied by Landlock, loopback included); where it lacks Landlock, or off
// Linux, commands run unconfined and Box.Warning says so. The environment
// is minimal everywhere: an allow-list of variables, a private HOME and
// TMPDIR, and no key of lemmings'.
package sandbox
