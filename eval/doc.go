// Package eval measures a model with lemmings on real exercises, laid out as
// Exercism's tracks and Aider's polyglot benchmark lay them out: each exercise
// is copied into a fresh git repository, a Solver (lemmings in-process, or the
// oracle that puts the reference solution in place) works on it, and the
// exercise's own tests — restored from the original, so an edited test never
// counts — decide. pass@1 is the first attempt; pass@2 adds a second attempt
// that is shown the failing test output, as Aider's harness does.
package eval
