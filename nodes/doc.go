// Package nodes is the workflow of lemmings: its state (runstate.State), the
// graph that Build wires, and the nodes that graph runs. Package run wires a
// run around it (models, gates, index, checkpoints, the .lemmings/ folder)
// and hands the nodes what they use in Deps.
//
// Where each node lives (`lemmings graph` prints the edges between them):
//
//	node             function            files
//	scope_agent      Deps.ScopeAgent     scope.go
//	task_planner     Deps.TaskPlanner    planner.go, plan_*.go, split.go
//	implementor      Deps.Implementor    implementor.go (the node; the attempt is
//	                                     package nodes/implementor)
//	qa               Deps.QA             qa*.go, escalate.go (disputed reviews)
//	mark_complete    Deps.MarkComplete   complete.go, knowledge_use.go
//	mark_failed      Deps.MarkFailed     complete.go
//	run_supervisors  supervisors.Runner  nodes/supervisors (wired in sup_wiring.go)
//	assessor         Deps.Assessor       assessor.go
//	polish           Deps.Polish         polish.go
//	report           Deps.Report         report.go, evidence.go (what report.md
//	                                     says is package runview's)
//
// Shared by the nodes: workflow.go (Build), hooks.go (what runs around every
// node: the supervisors' hook, then the caller's Deps.Hooks, such as run's
// board.md), routing.go (the conditional edges), state.go, deps.go and
// settings.go (what a node is given; SettingsFrom maps config onto it),
// llmcall.go and replies.go (model calls and their structured replies),
// prompt_sections.go (the sections the prompts share), tasks.go (a task's
// way through the workflow), text.go (clipping and the other text helpers),
// clock.go (what remains of limits.max_wall_time), architect.go (cloud edit
// instructions after failed attempts), review_requests.go (knowledge a human
// is asked to review) and the role templates in prompts/ (their section and
// role names in prompts/names.go).
package nodes
