// Package run wires a lemmings run around the workflow of package nodes:
// Start and Resume open the work tree, the models (RouterConfigFrom), the
// gates (GatesFrom), the retrieval index (OpenIndex), the event and prompt
// logs and the run store under the repository's .lemmings/ folder, map the
// configuration onto the workflow's settings (SettingsFrom), and run the
// graph. Store and LatestResumable read the runs a repository holds.
//
// cmd/lemmings, demo, eval and serve start and resume runs through this
// package; package nodes is given its settings and parts in nodes.Deps and
// knows nothing of the folder layout.
package run
