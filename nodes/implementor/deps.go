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

// Settings are what the Implementor reads: its knobs and its prompt budget.
type Settings struct {
	Knobs
	// Budget is the implementor's prompt budget in tokens
	// (limits.token_budgets.implementor).
	Budget int
}

// Knobs are the Implementor's settings as the configuration gives them. The
// workflow's settings embed them (nodes.Settings), so they are declared
// once and handed over whole.
type Knobs struct {
	// MaxActions bounds the tool loop's actions in one attempt.
	MaxActions      int
	GateOutputBytes int
	// EditProtocol is how the model writes code: EditText (the action in
	// JSON, the code as plain text in a second call) or EditJSON (the code
	// inside the JSON action).
	EditProtocol string
	// WholeFileLines: files up to this size are rewritten whole in the text
	// protocol; in larger ones the function, method or type that changes is
	// rewritten whole (Go, Python), or SEARCH/REPLACE blocks are asked for.
	WholeFileLines int
	// ReplyTokens is the primary role's reply budget (max_tokens; 0:
	// unknown): a file is asked for whole only when it fits.
	ReplyTokens int
	// Samples is how many candidates a code call may draw (implementor.samples):
	// the first that parses and adds no check problem is kept.
	Samples int
	// Draws is how many candidates a direct attempt's code request may draw,
	// each run against the gates (implementor.draws).
	Draws int
	// Direct: a quick task's first attempt with one file to change asks
	// for its code at once (implementor.direct).
	Direct bool
	// FixRounds is how often failing gates on finish go back to the model
	// inside the attempt (0: finish ends the attempt at once).
	FixRounds int
	// SyntaxChecks are run after each edit, by file extension
	// (workspace.DefaultSyntaxChecks); nil or empty: none.
	SyntaxChecks map[string]string
	// CLI, when set, has a coding CLI write the code (implementor.backend: cli).
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
