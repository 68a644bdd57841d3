// Package execinventory holds the test that keeps docs/security.md's
// inventory of the processes lemmings starts ("Every process lemmings
// starts") true: every call of exec.Command, exec.CommandContext,
// os.StartProcess, syscall.Exec, syscall.ForkExec, syscall.StartProcess or
// unix.Exec, and every exec.Cmd made by hand, in the module's non-test Go
// files, is a row of that table, and every row is such a call. A new place
// that starts a process fails the test until the table says what it runs,
// where, with which environment, inside or outside the sandbox, and what a
// repository or a model can choose of it.
package execinventory
