package nodes

import (
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

// PromptSamples returns, for each prompt template, samples of the data the
// workflow executes it with: every field empty, then every field set (so
// both sides of an {{if}} run). A template — an override under
// .lemmings/prompts — that names a field its data lacks then fails before a
// run starts (run.CheckPrompts), not in the middle of one. Templates
// rendered without data get nil.
func PromptSamples() map[string][]any {
	sup := supervisors.PromptSamples()
	return map[string][]any{
		runstate.NodeScope: {scopeData{}, scopeData{Remit: "remit", Feedback: "feedback", MaxFiles: 2, MaxChars: 600}},
		runstate.NodePlanner: {plannerData{}, plannerData{MilestoneID: "M1", Polish: true, Feedback: "feedback", TaskTitle: "task",
			Attempt: 2, MaxAttempts: 3, Approval: "reason", MaxFiles: 2, MaxChars: 600, CanSplit: true}},
		runstate.NodeImplementor:          implementor.PromptSamples(),
		runstate.NodeImplementor + "_cli": {nil},
		runstate.NodeQA:                   {nil},
		runstate.NodeAssessor:             {assessorData{}, assessorData{Reason: "milestone", MilestoneID: "M1", Tasks: 3}, assessorData{Reason: "failure"}},
		prompts.Architect:                 {nil},
		"summarizer":                      {nil},
		LabelShared:                       {nil},
		prompts.CodeStyle:                 sup,
		prompts.Design:                    sup,
		prompts.Internaliser:              sup,
	}
}
