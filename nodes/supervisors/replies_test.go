package supervisors

import (
	"slices"
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
)

// The Internaliser's items become documents in lessons/ or domain/, named by
// their title, one numbered rule a line; its titles are its findings.
func TestUnpackPlacesTheInternalisersItems(t *testing.T) {
	t.Parallel()
	out := Outcome{Job: runstate.SupervisorJob{Supervisor: prompts.Internaliser}, Intern: &InternaliserReply{Summary: "two", KnowledgeItems: []KnowledgeItem{
		{Category: "lesson", Title: "Read the Test First!", Content: "- read the failing test\n- then the code", Confidence: "high"},
		{Category: "domain", Title: "Leap years", Content: "divisible by 4", SourceTask: "t2", NeedsUserReview: true},
	}}}
	docs, dirs, findings, summary := Unpack(out)
	if len(docs) != 2 || dirs != nil || summary != "two" {
		t.Fatalf("docs %d, directives %v, summary %q: want 2 documents, none, two", len(docs), dirs, summary)
	}
	if d := docs[0]; d.Path != "lessons/read-the-test-first.md" || d.Rules != "1. read the failing test\n2. then the code" || d.Rationale != "Captured from task ? (confidence: high)." {
		t.Errorf("lesson: path %q, rules %q, rationale %q", d.Path, d.Rules, d.Rationale)
	}
	if d := docs[1]; d.Path != "domain/leap-years.md" || d.Category != "domain" ||
		d.Rationale != "Captured from task t2 (confidence: ). Needs user review: an implicit decision worth confirming." {
		t.Errorf("domain fact: path %q, category %q, rationale %q", d.Path, d.Category, d.Rationale)
	}
	if !slices.Equal(findings, []string{"read the test first!", "leap years"}) {
		t.Errorf("findings %q", findings)
	}
}

// A Code Style document without a folder goes to conventions/; its
// directives are filed as they came.
func TestUnpackFilesCodeStyleDocsAndDirectives(t *testing.T) {
	t.Parallel()
	out := Outcome{CodeStyle: &CodeStyleReply{
		Docs:       []DocSpec{{Path: "docs/knowledge/errors", Title: "Errors", Rules: []string{" wrap with %w "}}},
		Directives: []DirectiveSpec{{Type: "cleanup", Description: "rename x", Priority: "low"}},
		Findings:   []string{"errors unwrapped"},
	}}
	docs, dirs, findings, _ := Unpack(out)
	if len(docs) != 1 || docs[0].Path != "conventions/errors.md" || docs[0].Rules != "1. wrap with %w" {
		t.Fatalf("docs %+v", docs)
	}
	if len(dirs) != 1 || dirs[0].Description != "rename x" || dirs[0].Type != "cleanup" || len(findings) != 1 {
		t.Fatalf("directives %+v, findings %v", dirs, findings)
	}
}
