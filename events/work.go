package events

// The Implementor's work, the gates and QA, and the coding CLI.

import "github.com/lemmings-dev/lemmings/runstate"

// Event names of the work on a task.
const (
	KindAction                 = "action"
	KindCheck                  = "check"
	KindImplementorGate        = "implementor_gate"
	KindImplementorDirect      = "implementor_direct"
	KindImplementorBadCode     = "implementor_bad_code"
	KindImplementorSample      = "implementor_sample"
	KindImplementorTestDropped = "implementor_test_dropped"
	KindImplementorRefused     = "implementor_finish_refused"
	KindImplementation         = "implementation"
	KindGate                   = "gate"
	KindGatesReused            = "gates_reused"
	KindStartTests             = "start_tests"
	KindQA                     = "qa"
	KindCLIStart               = "cli_start"
	KindCLIEvent               = "cli_event"
	KindCLIRun                 = "cli_run"
	KindCLIOutside             = "cli_outside"
	KindCLICommitsDropped      = "cli_commits_dropped"
)

// Action: one Implementor action and the first line of its result; at most
// one of Gate, Path, Pattern and Query says what it acted on.
type Action struct {
	Action  string `json:"action"`
	Attempt int    `json:"attempt"`
	Gate    string `json:"gate,omitempty"`
	N       int    `json:"n"`
	Path    string `json:"path,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Query   string `json:"query,omitempty"`
	Result  string `json:"result"`
	Task    string `json:"task"`
}

// What is what the action acted on.
func (a Action) What() string { return a.Path + a.Pattern + a.Query + a.Gate }

// Check: the checks run after an edit passed, or the first problem it added.
type Check struct {
	Attempt int      `json:"attempt"`
	Passed  bool     `json:"passed"`
	Paths   []string `json:"paths"`
	Problem string   `json:"problem"`
	Task    string   `json:"task"`
}

// ImplementorGate: a gate run inside an attempt (From says what ran it).
type ImplementorGate struct {
	Attempt    int    `json:"attempt"`
	Command    string `json:"command"`
	DurationMS int64  `json:"duration_ms"`
	ExitCode   int    `json:"exit_code"`
	From       string `json:"from"`
	Gate       string `json:"gate"`
	Output     string `json:"output"`
	Passed     bool   `json:"passed"`
	Task       string `json:"task"`
}

// ImplementorDirect: the attempt is the direct one on one file.
type ImplementorDirect struct {
	Attempt int    `json:"attempt"`
	Path    string `json:"path"`
	Task    string `json:"task"`
}

// ImplementorBadCode: a code reply broke the file and was asked again.
type ImplementorBadCode struct {
	DoneReason string `json:"done_reason"`
	Grain      string `json:"grain"`
	Path       string `json:"path"`
	Problem    string `json:"problem"`
	Task       string `json:"task"`
}

// ImplementorSample: one candidate of a best-of-n code call.
type ImplementorSample struct {
	Attempt int    `json:"attempt"`
	Grain   string `json:"grain"`
	Kept    bool   `json:"kept"`
	Of      int    `json:"of"`
	Path    string `json:"path"`
	Problem string `json:"problem"`
	Reply   string `json:"reply"`
	Sample  int    `json:"sample"`
	Task    string `json:"task"`
	Tokens  int    `json:"tokens"`
}

// ImplementorTestDropped: the test the remit asked for, written after the
// direct attempt's code passed, was not kept (Reason says why): the test
// file is as it was, the code stays.
type ImplementorTestDropped struct {
	Attempt int    `json:"attempt"`
	Path    string `json:"path"`
	Reason  string `json:"reason"`
	Task    string `json:"task"`
}

// ImplementorFinishRefused: the attempt said finish again while a gate still
// failed on the same code, and ended as a loop.
type ImplementorFinishRefused struct {
	Attempt int    `json:"attempt"`
	Task    string `json:"task"`
}

// Implementation: how an Implementor attempt ended (runstate.ImplStatus's words).
type Implementation struct {
	Actions   int      `json:"actions"`
	Attempt   int      `json:"attempt"`
	Files     []string `json:"files"`
	FixRounds int      `json:"fix_rounds"`
	Malformed int      `json:"malformed"`
	// Reason is why an attempt that did not finish ended (its summary).
	Reason string              `json:"reason,omitempty"`
	Status runstate.ImplStatus `json:"status"`
	Task   string              `json:"task"`
}

// Gate: a gate QA (or the final check, Task "final") ran.
type Gate struct {
	ExitCode int    `json:"exit_code"`
	Gate     string `json:"gate"`
	MS       int64  `json:"ms"`
	Passed   bool   `json:"passed"`
	Task     string `json:"task"`
}

// GatesReused: QA took the gates the attempt passed on the same diff.
type GatesReused struct {
	DiffHash string `json:"diff_hash"`
}

// StartTests: the tests that failed when a task started (its test gates run
// once on the start tree, for QA's evidence).
type StartTests struct {
	Failing []string `json:"failing,omitempty"`
	Task    string   `json:"task"`
}

// QA: QA's verdict on an attempt; By is "checks" when no model was asked,
// Reviewer "cloud" for a disputed review the cloud passed, Disputed for
// work committed with its review disputed; Attempt and Feedback come with
// a failure.
type QA struct {
	Attempt  int    `json:"attempt,omitempty"`
	By       string `json:"by,omitempty"`
	Disputed bool   `json:"disputed,omitempty"`
	Feedback string `json:"feedback,omitempty"`
	Passed   bool   `json:"passed"`
	Reviewer string `json:"reviewer,omitempty"`
	Task     string `json:"task"`
}

// CLIStart: the coding CLI was started for a round of an attempt.
type CLIStart struct {
	Attempt     int    `json:"attempt"`
	CLI         string `json:"cli"`
	PromptChars int    `json:"prompt_chars"`
	Round       int    `json:"round"`
	Task        string `json:"task"`
}

// CLIEvent: one message or tool call of the coding CLI's stream.
type CLIEvent struct {
	EventKind string `json:"kind"` // codingcli.EventKind
	Task      string `json:"task"`
	Text      string `json:"text"`
	Tool      string `json:"tool"`
}

// CLIRun: the coding CLI's run ended.
type CLIRun struct {
	Attempt       int     `json:"attempt"`
	CLI           string  `json:"cli"`
	CostUSD       float64 `json:"cost_usd"`
	DurationMS    int64   `json:"duration_ms"`
	ExitCode      int     `json:"exit_code"`
	Failed        string  `json:"failed,omitempty"`
	Final         string  `json:"final"`
	InputTokens   int     `json:"input_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	Round         int     `json:"round"`
	Stderr        string  `json:"stderr,omitempty"`
	Task          string  `json:"task"`
	TimedOut      bool    `json:"timed_out"`
	ToolCalls     int     `json:"tool_calls"`
	UnparsedLines int     `json:"unparsed_lines,omitempty"`
}

// CLIOutside: the coding CLI changed things outside the work tree.
type CLIOutside struct {
	Attempt int      `json:"attempt"`
	Changes []string `json:"changes"`
	Task    string   `json:"task"`
}

// CLICommitsDropped: the coding CLI committed; its changes were kept, its
// commits not.
type CLICommitsDropped struct {
	Attempt int    `json:"attempt"`
	Commits int    `json:"commits"`
	Task    string `json:"task"`
}

// Kind implements Payload.
func (Action) Kind() string { return KindAction }

// Kind implements Payload.
func (Check) Kind() string { return KindCheck }

// Kind implements Payload.
func (ImplementorGate) Kind() string { return KindImplementorGate }

// Kind implements Payload.
func (ImplementorDirect) Kind() string { return KindImplementorDirect }

// Kind implements Payload.
func (ImplementorBadCode) Kind() string { return KindImplementorBadCode }

// Kind implements Payload.
func (ImplementorSample) Kind() string { return KindImplementorSample }

// Kind implements Payload.
func (ImplementorTestDropped) Kind() string { return KindImplementorTestDropped }

// Kind implements Payload.
func (ImplementorFinishRefused) Kind() string { return KindImplementorRefused }

// Kind implements Payload.
func (Implementation) Kind() string { return KindImplementation }

// Kind implements Payload.
func (Gate) Kind() string { return KindGate }

// Kind implements Payload.
func (GatesReused) Kind() string { return KindGatesReused }
func (StartTests) Kind() string  { return KindStartTests }

// Kind implements Payload.
func (QA) Kind() string { return KindQA }

// Kind implements Payload.
func (CLIStart) Kind() string { return KindCLIStart }

// Kind implements Payload.
func (CLIEvent) Kind() string { return KindCLIEvent }

// Kind implements Payload.
func (CLIRun) Kind() string { return KindCLIRun }

// Kind implements Payload.
func (CLIOutside) Kind() string { return KindCLIOutside }

// Kind implements Payload.
func (CLICommitsDropped) Kind() string { return KindCLICommitsDropped }

func init() {
	register(
		func() Payload { return &Action{} },
		func() Payload { return &Check{} },
		func() Payload { return &ImplementorGate{} },
		func() Payload { return &ImplementorDirect{} },
		func() Payload { return &ImplementorBadCode{} },
		func() Payload { return &ImplementorSample{} },
		func() Payload { return &ImplementorTestDropped{} },
		func() Payload { return &ImplementorFinishRefused{} },
		func() Payload { return &Implementation{} },
		func() Payload { return &Gate{} },
		func() Payload { return &GatesReused{} },
		func() Payload { return &StartTests{} },
		func() Payload { return &QA{} },
		func() Payload { return &CLIStart{} },
		func() Payload { return &CLIEvent{} },
		func() Payload { return &CLIRun{} },
		func() Payload { return &CLIOutside{} },
		func() Payload { return &CLICommitsDropped{} },
	)
}
