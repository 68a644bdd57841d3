package nodes

// Structured replies of each role. The JSON schema sent to the model is
// generated from these types; bounds (maxLength, maxItems, enum) keep weak or
// noisy models from rambling until the context runs out.

import (
	"github.com/invopop/jsonschema"
	"github.com/lemmings-dev/lemmings/runstate"
)

type taskSpec struct {
	Title              string   `json:"title" jsonschema:"minLength=1,maxLength=120"`
	Instructions       string   `json:"instructions" jsonschema:"maxLength=1000"`
	AcceptanceCriteria []string `json:"acceptance_criteria" jsonschema:"maxItems=4,items.maxLength=300"`
	TargetFiles        []string `json:"target_files,omitempty" jsonschema:"maxItems=4,items.maxLength=200"`
}

func (t taskSpec) planned() runstate.PlannedTask {
	return runstate.PlannedTask{Title: t.Title, Instructions: t.Instructions, AcceptanceCriteria: t.AcceptanceCriteria, TargetFiles: t.TargetFiles}
}

type milestoneSpec struct {
	Goal   string     `json:"goal" jsonschema:"minLength=1,maxLength=300"`
	Themes []string   `json:"themes" jsonschema:"maxItems=4,items.maxLength=40"`
	Tasks  []taskSpec `json:"tasks" jsonschema:"minItems=1,maxItems=5"`
}

type scopeReply struct {
	Milestones []milestoneSpec `json:"milestones" jsonschema:"minItems=1,maxItems=5"`
}

type plannerReply struct {
	Decision     string            `json:"decision" jsonschema:"enum=implement,enum=skip,enum=abort,enum=milestone_done,enum=split"`
	Reasoning    string            `json:"reasoning" jsonschema:"maxLength=600"`
	Task         *taskSpec         `json:"task,omitempty"`
	Subtasks     []taskSpec        `json:"subtasks,omitempty" jsonschema:"maxItems=3"`
	CarryForward []taskSpec        `json:"carry_forward" jsonschema:"maxItems=8"`
	Directives   []DirectiveAnswer `json:"directives" jsonschema:"maxItems=20"`
}

type editSpec struct {
	Path    string `json:"path" jsonschema:"maxLength=200"`
	Search  string `json:"search"`
	Replace string `json:"replace"`
}

// implAction is an action of the JSON protocol: the code, when it writes
// any, comes inside the JSON. The fields both protocols share are embedded
// (actionHead, actionTail) in the order the schema lists them.
type implAction struct {
	actionHead
	Edits   []editSpec `json:"edits,omitempty" jsonschema:"maxItems=10"`
	Blocks  string     `json:"blocks,omitempty"`
	Content string     `json:"content,omitempty"`
	actionTail
}

// actionHead and actionTail are the fields of an action both edit protocols
// have.
type actionHead struct {
	Thought string `json:"thought" jsonschema:"maxLength=400"`
	Action  string `json:"action"` // one of toolNames: see JSONSchemaExtend
	Path    string `json:"path,omitempty" jsonschema:"maxLength=200"`
	// Symbol names the function, method or type an edit or read_file is
	// about (text protocol): the code call shows it and takes it back whole.
	Symbol string `json:"symbol,omitempty" jsonschema:"maxLength=120"`
	// StartLine and EndLine pick read_file's window.
	StartLine int    `json:"start_line,omitempty" jsonschema:"minimum=0"`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"minimum=0"`
	Pattern   string `json:"pattern,omitempty" jsonschema:"maxLength=200"`
	Query     string `json:"query,omitempty" jsonschema:"maxLength=300"`
}

type actionTail struct {
	Gate     string `json:"gate,omitempty" jsonschema:"maxLength=40"`
	Summary  string `json:"summary,omitempty" jsonschema:"maxLength=800"`
	Question string `json:"question,omitempty" jsonschema:"maxLength=600"`
}

// JSONSchemaExtend sets the enum of "action" to the tools the JSON protocol
// offers (llm.SchemaFor calls it).
func (implAction) JSONSchemaExtend(s *jsonschema.Schema) { setActionEnum(s, toolNames(false)) }

func setActionEnum(s *jsonschema.Schema, names []string) {
	if p, ok := s.Properties.Get("action"); ok {
		p.Enum = nil
		for _, n := range names {
			p.Enum = append(p.Enum, n)
		}
	}
}

type criterionVerdict struct {
	Number    int    `json:"number"`
	Criterion string `json:"criterion" jsonschema:"maxLength=300"`
	Met       bool   `json:"met"`
	Quote     string `json:"quote" jsonschema:"maxLength=300"`
	Evidence  string `json:"evidence" jsonschema:"maxLength=400"`
}

type qaReply struct {
	Criteria []criterionVerdict `json:"criteria" jsonschema:"maxItems=10"`
	Feedback string             `json:"feedback" jsonschema:"maxLength=1500"`
}

type assessorReply struct {
	Verdict           string   `json:"verdict" jsonschema:"enum=aligned,enum=minor_drift,enum=major_divergence,enum=all_done"`
	Notes             string   `json:"notes" jsonschema:"maxLength=800"`
	MilestoneComplete bool     `json:"milestone_complete"`
	Missing           []string `json:"missing,omitempty" jsonschema:"maxItems=5,items.maxLength=300"`
}

type summaryReply struct {
	Summary string `json:"summary" jsonschema:"minLength=1,maxLength=600"`
}
