// Package workspace is everything about the repository the agents work on:
// confined file access (FS), Aider-style SEARCH/REPLACE edits with a
// whitespace-tolerant match (ParseEditBlocks, ApplyEdit, FS.Apply), git
// (OpenRepo, a worktree per run on branch lemmings/<run-id>, commits with
// trailers, reset, diff), gate commands (DetectGates, RunGate) and loop
// detection (DiffHash, ActionLoop).
//
// Errors meant for the model (a refused path, a SEARCH text that matches
// nowhere) are typed and their messages say what to do next; system faults
// are plain wrapped errors.
package workspace
