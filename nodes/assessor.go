package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
)

type assessorData struct {
	Reason      string
	MilestoneID string
	Tasks       int
}

// Assessor checks alignment every review_interval tasks, after a failure and
// at the end of each milestone, reading supervisor findings as evidence of
// drift (docs/supervisors.md: a review due with the supervisors runs after
// them).
func (d *Deps) Assessor(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	reason := s.ReviewReason
	s.ReviewReason = ""
	s.TasksSinceLastReview = 0
	if s.Phase == runstate.PhasePolish {
		return s, nil // polish work is reviewed by QA alone
	}
	if s.StopReason != "" || (d.Settings.MaxConsecutiveFailures > 0 && s.ConsecutiveFailures >= d.Settings.MaxConsecutiveFailures) {
		s.Assessment = &runstate.Assessment{Verdict: "aligned", Reason: reason, Notes: "not assessed: the run is stopping"}
		return s, nil
	}
	m := s.ActiveMilestone()
	if s.Quick {
		// A quick run's one task passed its gates and checks: that is the
		// verdict, no model is asked again.
		if reason == "milestone" && m != nil {
			advanceMilestone(&s)
		}
		s.Assessment = &runstate.Assessment{Verdict: "aligned", Reason: reason, Notes: "quick run: the gates and QA are the verdict"}
		if s.ActiveMilestone() == nil {
			s.Assessment.Verdict = "all_done"
		}
		return s, nil
	}
	data := assessorData{Reason: reason, Tasks: s.TasksCompleted}
	if m != nil {
		data.MilestoneID = m.ID
	}
	sections := []llm.Section{ // after the shared prefix: project context and knowledge
		{Title: prompts.SecMilestones, Body: s.MilestoneOverview(), Required: true},
		completedSection(&s),
		{Title: prompts.SecFindings, Body: supervisorEvidence(&s), Priority: prompts.PrioKnowledge},
	}
	reply, _, err := ask[assessorReply](ctx, d, &s, call{Label: runstate.NodeAssessor, Data: data, Sections: sections})
	if err != nil {
		if !llm.ModelFault(err) {
			return s, err
		}
		// Without a usable assessment the run goes on as planned: the planner's
		// own view of the milestone stands.
		events.Emit(ctx, events.Warning{Message: "assessment unusable, continuing as aligned: " + err.Error()})
		reply = assessorReply{Verdict: "aligned", MilestoneComplete: true, Notes: "assessment unavailable"}
	}
	a := &runstate.Assessment{Verdict: reply.Verdict, Notes: reply.Notes, Reason: reason}
	s.Assessment = a

	if reason == "milestone" && m != nil {
		if reply.MilestoneComplete || reply.Verdict == "all_done" {
			advanceMilestone(&s)
		} else {
			for _, miss := range reply.Missing {
				if strings.TrimSpace(miss) != "" && !containsPlanned(s.CarryForward, miss) {
					s.CarryForward = append(s.CarryForward, runstate.PlannedTask{Title: textutil.ClipTrimmed(miss, 120), Instructions: "The Assessor found this missing from milestone " + m.ID + ": " + miss})
				}
			}
			if len(s.CarryForward) == 0 {
				advanceMilestone(&s) // nothing concrete is missing: do not loop on the claim
			}
		}
	}
	switch a.Verdict {
	case "minor_drift":
		happen(&s, runstate.HappenedMinorDrift)
	case "all_done":
		if s.ActiveMilestone() != nil { // the Assessor cannot end milestones it has not seen finished
			a.Verdict = "aligned"
		}
	}
	if s.ActiveMilestone() == nil {
		a.Verdict = "all_done"
	}
	events.Emit(ctx, events.Assessment{Verdict: a.Verdict, Reason: reason, Notes: textutil.ClipTrimmed(a.Notes, 300)})
	return s, nil
}

// advanceMilestone closes the current milestone and opens the next one with
// its planned tasks.
func advanceMilestone(s *runstate.State) {
	if m := s.ActiveMilestone(); m != nil {
		m.Status = runstate.MilestoneDone
	}
	s.CurrentMilestone++
	if next := s.ActiveMilestone(); next != nil {
		next.Status = runstate.MilestoneActive
		s.CarryForward = append(keepDirectiveTasks(s.CarryForward), next.Tasks...)
	}
}

func supervisorEvidence(s *runstate.State) string {
	var b strings.Builder
	start := max(0, len(s.SupervisorRunLog)-6)
	for _, r := range s.SupervisorRunLog[start:] {
		fmt.Fprintf(&b, "- %s (%s, after task %d): %s; %d directives\n", r.Supervisor, r.Trigger, r.AtTask, r.Summary, len(r.Directives))
	}
	for _, d := range orderedDirectives(s.PendingDirectives, false) {
		fmt.Fprintf(&b, "- pending %s %s directive: %s\n", d.Priority, d.Type, d.Description)
	}
	if b.Len() == 0 {
		return "(none)"
	}
	return strings.TrimSpace(b.String())
}
