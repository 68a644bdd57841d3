// Package runstate is a lemmings run's state and the words it is read in:
// the state the workflow checkpoints after every node (State), how a run
// stands (StandingOf: its status, reason and next step), why it stopped
// (Stop: a limit with its configuration key, or a failure), how it ended
// (Outcome) and the vocabulary of node names, Implementor statuses,
// escalations and directives. It imports nothing of lemmings but graph (for
// a stored run's graph status), so whatever reads a run — inspect, runview,
// serve, the MCP server, the cluster — reads it without the workflow
// (package nodes).
package runstate
