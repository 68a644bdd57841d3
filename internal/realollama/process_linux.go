package realollama

import "syscall"

// sysProcAttr puts the child in a process group of its own and has the kernel send it
// SIGTERM when the thread that started it dies: a backstop for a test binary that ends
// before its cleanups run (os.Exit, a `go test -timeout` panic, a kill). SIGTERM rather than
// SIGKILL because `ollama serve` answers SIGTERM by killing and reaping its runner
// processes; killed outright, it would leave them running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
