package nodes

import (
	"context"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/runstate"
)

// countKnowledgeUse promotes provisional documents that guided enough tasks
// without trouble (docs/knowledge.md "Lifecycle"). A failed task resets the
// count of the documents it was given.
func (d afterTask) countKnowledgeUse(ctx context.Context, s *runstate.State, t *runstate.Task) {
	if len(t.KnowledgeInjected) == 0 || d.Settings.PromoteAfter <= 0 {
		return
	}
	store, _, err := openKnowledge(d.Work, d.Settings.KnowledgeDir)
	if err != nil {
		return
	}
	if s.KnowledgeUses == nil {
		s.KnowledgeUses = map[string]int{}
	}
	var promoted []string
	for _, p := range t.KnowledgeInjected {
		doc, ok := store.Get(p)
		if !ok || doc.EffectiveStatus() != knowledge.Provisional { // as Select judged it when injecting
			continue
		}
		s.KnowledgeUses[p]++
		if s.KnowledgeUses[p] < d.Settings.PromoteAfter {
			continue
		}
		if _, err := store.Promote(p, t.ID, t.Milestone, s.KnowledgeUses[p]); err != nil {
			events.Emit(ctx, events.Warning{Message: "could not promote " + p + ": " + err.Error()})
			continue
		}
		delete(s.KnowledgeUses, p)
		promoted = append(promoted, p)
	}
	if len(promoted) == 0 {
		return
	}
	if _, err := d.Work.Commit(ctx, "knowledge: established "+strings.Join(promoted, ", "), map[string]string{TrailerRun: s.RunID, "Lemmings-Promoted-After": t.ID}); err != nil {
		events.Emit(ctx, events.Warning{Message: "knowledge promotion not committed: " + err.Error()})
		return
	}
	events.Emit(ctx, events.KnowledgePromoted{Docs: promoted})
}

// forgetKnowledgeUse resets the counts of documents a failed task was given.
func forgetKnowledgeUse(s *runstate.State, t *runstate.Task) {
	for p := range s.KnowledgeUses {
		if slices.Contains(t.KnowledgeInjected, p) {
			delete(s.KnowledgeUses, p)
		}
	}
}
