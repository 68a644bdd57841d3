package nodes

// Structured replies of each role. The JSON schema sent to the model is
// generated from these types; bounds (maxLength, maxItems, enum) keep weak or
// noisy models from rambling until the context runs out.

import "github.com/lemmings-dev/lemmings/runstate"

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
