// Package implementor is the workflow's Implementor: one attempt at the
// current task, either lemmings' own tool loop (every model reply one
// schema-constrained action, run by the orchestrator inside the work tree)
// or a coding CLI. It knows the run's state (package runstate) and what it is
// handed in Deps, not the workflow: package nodes wires it.
package implementor

import (
	"context"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// Deps are what the Implementor uses, and all of it: the work tree, the
// model and how the workflow composes its prompts, the gates and the
// sandbox they run in, the parser, the settings it reads, retrieval, the
// clock, its events, and the interceptors around its model and tool calls.
type Deps struct {
	Work    *workspace.Worktree
	Model   Model
	Prompts Prompts
	Gates   []workspace.Gate
	// Sandbox confines the gates, the syntax checks and the coding CLI; nil
	// is a wiring error they report.
	Sandbox *sandbox.Box
	// Parser reads a file's units and checks that it parses (ParserFor).
	Parser splice.Parser
	// Search may be nil (no index): rag_search then says so.
	Search   Searcher
	Settings Settings
	Clock    Clock
	// Emit sends the Implementor's events; nil: events.Emit, to the sinks
	// of the node the context belongs to.
	Emit func(ctx context.Context, p events.Payload)
	// Interceptors run around the tool loop's model and tool calls after
	// the Implementor's own (Chain); nil: those alone.
	Interceptors []Interceptor
}

// Model is what the Implementor needs from the llm layer.
type Model interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// speedometer is a Model that knows how fast the server reads a prompt
// (llm.Router).
type speedometer interface {
	PrefillRate(role string) float64
}

// Searcher is rag_search's retrieval (rag.Index).
type Searcher interface {
	Search(ctx context.Context, query string, k int, f rag.Filter) ([]rag.Hit, error)
}

// Prompts is how the workflow composes a prompt, so the Implementor's starts
// with the same bytes as every other local role's (the shared prefix) and
// reports its model calls as the others do.
type Prompts interface {
	// Compose composes the implementor template with data after the run's
	// shared prefix, the sections packed within budget tokens.
	Compose(ctx context.Context, s *runstate.State, data any, sections []llm.Section, budget int) ([]llm.Message, error)
	// ComposeAlone composes template label (the implementor's, or its
	// coding CLI's) without the shared prefix.
	ComposeAlone(label string, data any, budget int, sections []llm.Section) (llm.Prompt, error)
	// Knowledge is the project's knowledge selected for the run's milestone.
	Knowledge(ctx context.Context, s *runstate.State) llm.Section
	// Milestone is the milestone and the task in progress as a section.
	Milestone(s *runstate.State) llm.Section
	// Bound gives a reply schema the per-call bounds of the workflow.
	Bound(schema map[string]any)
	// Called reports a model call that answered; Failed one that did not.
	Called(ctx context.Context, label string, resp llm.Response)
	Failed(ctx context.Context, ev events.ModelError)
}

// Clock is the time and what remains of limits.max_wall_time.
type Clock interface {
	Now() time.Time
	// WallTimeLeft is what remains of the run's wall time; limited is false
	// when it has none.
	WallTimeLeft(s *runstate.State, now time.Time) (left time.Duration, limited bool)
	// WallTimeReached is the reason an attempt ends when none remains.
	WallTimeReached() string
}

// Settings are the knobs the Implementor reads (nodes.Settings has them).
type Settings struct {
	// MaxActions bounds the tool loop's actions in one attempt.
	MaxActions int
	// Budget is the implementor's prompt budget in tokens
	// (limits.token_budgets.implementor).
	Budget          int
	GateOutputBytes int
	// EditProtocol: EditText or EditJSON.
	EditProtocol   string
	WholeFileLines int
	// ReplyTokens is the primary role's reply budget (0: unknown).
	ReplyTokens int
	Samples     int
	Draws       int
	Direct      bool
	FixRounds   int
	// SyntaxChecks run after each edit, by file extension.
	SyntaxChecks map[string]string
	// CLI, when set, has a coding CLI write the code.
	CLI *CLISettings
}

// Edit protocols of the implementor.
const (
	EditText = "text"
	EditJSON = "json"
)

// ActionReplyTokens is the reply budget of one action of the text protocol;
// its code comes in a call of its own (codeReply).
const ActionReplyTokens = 384
