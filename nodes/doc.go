// Package nodes is the workflow of lemmings: its state (WorkflowState), the
// graph that Build wires, and the nodes that graph runs. Package run wires a
// run around it (models, gates, index, checkpoints, the .lemmings/ folder)
// and hands the nodes what they use in Deps.
//
// Where each node lives (`lemmings graph` prints the edges between them):
//
//	node             function            files
//	scope_agent      Deps.ScopeAgent     scope.go
//	task_planner     Deps.TaskPlanner    planner.go, plan_*.go, split.go
//	implementor      Deps.Implementor    implementor*.go, tools.go, tools/*.md
//	qa               Deps.QA             qa*.go, escalate.go (disputed reviews)
//	mark_complete    Deps.MarkComplete   complete.go, knowledge_use.go
//	mark_failed      Deps.MarkFailed     complete.go
//	run_supervisors  Deps.RunSupervisors sup_*.go
//	assessor         Deps.Assessor       assessor.go
//	polish           Deps.Polish         polish.go
//	report           Deps.Report         report*.go, gist.go
//
// Shared by the nodes: workflow.go (Build, board.md after each node),
// routing.go (the conditional edges), state.go, deps.go and settings.go (what
// a node is given), llmcall.go and replies.go (model calls and their
// structured replies), prompt_sections.go (the sections the prompts share),
// architect.go (cloud edit instructions after failed attempts),
// review_requests.go (knowledge a human is asked to review) and the role
// templates in prompts/.
package nodes
