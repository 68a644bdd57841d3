package llm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var builtinPrompts = fstest.MapFS{
	"task_planner.tmpl": {Data: []byte("You are the TaskPlanner for {{.Project}}.\n{{define \"instructions\"}}Plan milestone {{.Milestone}}. Each directive MUST be addressed.{{end}}")},
	"qa.tmpl":           {Data: []byte("You are QA.")},
	"README.md":         {Data: []byte("not a template")},
}

type plannerData struct{ Project, Milestone string }

func TestComposeOrder(t *testing.T) {
	t.Parallel()
	c, err := NewComposer(builtinPrompts, "", "GLOBAL: be careful.", "PROJECT: Go 1.26, no cgo.")
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Compose("task_planner", plannerData{"lemmings", "M2"}, 0,
		Section{Title: "PROJECT CONTEXT", Body: "repo tree"},
		Section{Title: "PROJECT KNOWLEDGE", Body: "conventions"},
		Section{Title: "EMPTY", Body: "  \n"},
		Section{Title: "CURRENT MILESTONE", Body: "M2: flags"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 2 || p.Messages[0].Role != "system" || p.Messages[1].Role != "user" {
		t.Fatalf("messages %+v", p.Messages)
	}
	wantSystem := "GLOBAL: be careful.\n\nPROJECT: Go 1.26, no cgo.\n\nYou are the TaskPlanner for lemmings."
	if p.Messages[0].Content != wantSystem {
		t.Errorf("system:\n%q\nwant\n%q", p.Messages[0].Content, wantSystem)
	}
	wantUser := "## PROJECT CONTEXT\nrepo tree\n\n## PROJECT KNOWLEDGE\nconventions\n\n## CURRENT MILESTONE\nM2: flags\n\n## INSTRUCTIONS\nPlan milestone M2. Each directive MUST be addressed."
	if p.Messages[1].Content != wantUser {
		t.Errorf("user:\n%q\nwant\n%q", p.Messages[1].Content, wantUser)
	}
	if p.Tokens != countMessages(p.Messages, nil) || len(p.Dropped) != 0 {
		t.Errorf("tokens %d dropped %v", p.Tokens, p.Dropped)
	}
}

func TestComposeOmitsEmptyPreambles(t *testing.T) {
	t.Parallel()
	c, err := NewComposer(builtinPrompts, "", "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Compose("qa", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 || p.Messages[0].Content != "You are QA." {
		t.Errorf("messages %+v", p.Messages)
	}
}

func TestComposeCallerInstructionsWin(t *testing.T) {
	t.Parallel()
	c, _ := NewComposer(builtinPrompts, "", "", "")
	p, err := c.Compose("task_planner", plannerData{"x", "M1"}, 0, Section{Title: "INSTRUCTIONS", Body: "custom"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(p.Messages[1].Content, "## INSTRUCTIONS") != 1 || !strings.Contains(p.Messages[1].Content, "custom") {
		t.Errorf("user %q", p.Messages[1].Content)
	}
}

func lines(n int, word string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(word)
		b.WriteString(" line with some words in it\n")
	}
	return b.String()
}

func TestComposePacking(t *testing.T) {
	t.Parallel()
	c, err := NewComposer(builtinPrompts, "", "global", "project")
	if err != nil {
		t.Fatal(err)
	}
	data := plannerData{"p", "M1"}
	context := Section{Title: "PROJECT CONTEXT", Body: lines(40, "ctx"), Priority: 5}
	knowledge := Section{Title: "PROJECT KNOWLEDGE", Body: lines(60, "know"), Priority: 3}
	milestone := Section{Title: "CURRENT MILESTONE", Body: "M1", Required: true}
	done := Section{Title: "COMPLETED WORK", Body: lines(20, "done"), Priority: 1}
	full, _ := c.Compose("task_planner", data, 0, context, knowledge, milestone, done)

	t.Run("fits: nothing dropped", func(t *testing.T) {
		p, err := c.Compose("task_planner", data, full.Tokens, context, knowledge, milestone, done)
		if err != nil || len(p.Dropped) != 0 || p.Tokens != full.Tokens {
			t.Fatalf("dropped %v err %v", p.Dropped, err)
		}
	})
	t.Run("lowest priority section dropped whole when the overflow covers it", func(t *testing.T) {
		without, _ := c.Compose("task_planner", data, 0, context, knowledge, milestone)
		budget := without.Tokens
		p, err := c.Compose("task_planner", data, budget, context, knowledge, milestone, done)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(p.Dropped, ",") != "COMPLETED WORK" || p.Tokens > budget {
			t.Errorf("dropped %v tokens %d budget %d", p.Dropped, p.Tokens, budget)
		}
		if strings.Contains(p.Messages[1].Content, "COMPLETED WORK") || !strings.Contains(p.Messages[1].Content, "## INSTRUCTIONS") {
			t.Errorf("user %q", p.Messages[1].Content)
		}
	})
	t.Run("a smaller overflow cuts the lowest-priority section at a line", func(t *testing.T) {
		budget := full.Tokens - 60
		p, err := c.Compose("task_planner", data, budget, context, knowledge, milestone, done)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(p.Dropped, ",") != "COMPLETED WORK (truncated)" || p.Tokens > budget {
			t.Fatalf("dropped %v tokens %d budget %d", p.Dropped, p.Tokens, budget)
		}
		user := p.Messages[1].Content
		if strings.Count(user, "know line") != 60 || strings.Count(user, "ctx line") != 40 || strings.Count(user, "done line") >= 20 {
			t.Errorf("only COMPLETED WORK should lose lines: %q", user)
		}
		cut := 20 - strings.Count(user, "done line")
		if !strings.Contains(user, fmt.Sprintf("[… %d more lines cut to fit the context budget]", cut)) {
			t.Errorf("marker should count %d cut lines: %q", cut, user)
		}
	})
	t.Run("then the largest of equal-priority sections is cut at a line", func(t *testing.T) {
		budget := full.Tokens - CountTokens("## COMPLETED WORK\n"+done.Body) - 200
		ctx2, know2 := context, knowledge
		ctx2.Priority, know2.Priority = 3, 3
		p, err := c.Compose("task_planner", data, budget, ctx2, know2, milestone, done)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(p.Dropped, ",") != "COMPLETED WORK,PROJECT KNOWLEDGE (truncated)" || p.Tokens > budget {
			t.Fatalf("dropped %v tokens %d budget %d", p.Dropped, p.Tokens, budget)
		}
		user := p.Messages[1].Content
		if !strings.Contains(user, "more lines cut to fit the context budget]") || strings.Count(user, "ctx line") != 40 {
			t.Errorf("user %q", user)
		}
		// Cut at a line boundary: every kept knowledge line is whole.
		for _, l := range strings.Split(user, "\n") {
			if strings.HasPrefix(l, "know") && l != "know line with some words in it" {
				t.Errorf("partial line %q", l)
			}
		}
		// Order is kept.
		if strings.Index(user, "## PROJECT CONTEXT") > strings.Index(user, "## PROJECT KNOWLEDGE") ||
			strings.Index(user, "## CURRENT MILESTONE") > strings.Index(user, "## INSTRUCTIONS") {
			t.Errorf("order changed: %q", user)
		}
	})
	t.Run("required parts alone too big is ContextTooLarge", func(t *testing.T) {
		_, err := c.Compose("task_planner", data, 30, context, knowledge, milestone, done)
		if e := asError(t, err); e.Kind != KindContextTooLarge || e.Window != 30 || e.PromptTokens <= 30 {
			t.Errorf("error %+v", e)
		}
	})
	t.Run("tight budget drops all optional sections", func(t *testing.T) {
		req, _ := c.Compose("task_planner", data, 0, milestone)
		p, err := c.Compose("task_planner", data, req.Tokens, context, knowledge, milestone, done)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Dropped) != 3 || p.Tokens > req.Tokens {
			t.Errorf("dropped %v tokens %d", p.Dropped, p.Tokens)
		}
		for _, d := range p.Dropped {
			if strings.HasSuffix(d, "(truncated)") {
				t.Errorf("a dropped section is still listed as truncated: %v", p.Dropped)
			}
		}
	})
}

func TestComposerOverrides(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "qa.tmpl"), []byte("Project QA: {{.}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "task_planner.tmpl"), []byte("Our planner for {{.Project}}."), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := NewComposer(builtinPrompts, dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Compose("qa", "strict", 0)
	if p.Messages[0].Content != "Project QA: strict" {
		t.Errorf("override not used: %q", p.Messages[0].Content)
	}
	if c.Origin("qa") != filepath.Join(dir, "qa.tmpl") {
		t.Errorf("origin %q", c.Origin("qa"))
	}
	p, err = c.Compose("task_planner", plannerData{"x", "M9"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Messages[0].Content != "Our planner for x." || !strings.Contains(p.Messages[1].Content, "Plan milestone M9") {
		t.Errorf("an override without instructions keeps the built-in ones: %+v", p.Messages)
	}
}

func TestComposerBrokenOverrideNamesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "qa.tmpl")
	if err := os.WriteFile(bad, []byte("You are QA {{.Broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewComposer(builtinPrompts, dir, "", "")
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("error %v should name %s and the line", err, bad)
	}
}

func TestComposerUnknownOverrideIsAnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "qa_agent.tmpl"), []byte("typo"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewComposer(builtinPrompts, dir, "", "")
	if err == nil || !strings.Contains(err.Error(), "qa_agent") || !strings.Contains(err.Error(), "known: qa, task_planner") {
		t.Fatalf("error %v", err)
	}
}

func TestComposeErrors(t *testing.T) {
	t.Parallel()
	c, _ := NewComposer(builtinPrompts, filepath.Join(t.TempDir(), "missing"), "", "")
	if _, err := c.Compose("nope", nil, 0); err == nil || !strings.Contains(err.Error(), "known: qa, task_planner") {
		t.Errorf("unknown role: %v", err)
	}
	if _, err := c.Compose("task_planner", map[string]string{"Project": "x"}, 0); err == nil || !strings.Contains(err.Error(), "Milestone") {
		t.Errorf("missing data key should fail: %v", err)
	}
}

func TestComposerRender(t *testing.T) {
	t.Parallel()
	c, _ := NewComposer(builtinPrompts, "", "G", "P")
	got, err := c.Render("task_planner", InstructionsTemplate, plannerData{"x", "M3"})
	if err != nil || got != "Plan milestone M3. Each directive MUST be addressed." {
		t.Errorf("instructions %q %v", got, err)
	}
	got, err = c.Render("task_planner", "", plannerData{"x", "M3"})
	if err != nil || got != "You are the TaskPlanner for x.\n" {
		t.Errorf("main %q %v", got, err)
	}
	if got, err := c.Render("qa", InstructionsTemplate, nil); got != "" || err != nil {
		t.Errorf("a missing block renders empty: %q %v", got, err)
	}
	if _, err := c.Render("nope", "", nil); err == nil {
		t.Error("unknown role accepted")
	}
	if _, err := c.Render("task_planner", InstructionsTemplate, struct{}{}); err == nil || !strings.Contains(err.Error(), "Milestone") {
		t.Errorf("a missing field should fail: %v", err)
	}
}

// A call's reply budget is what it asks for, never more than the role allows.
func TestReplyTokensAreCappedByTheRole(t *testing.T) {
	for _, c := range []struct{ asked, role, want int }{
		{384, 4096, 384}, {1280, 320, 320}, {0, 4096, 4096}, {512, 0, 512}, {0, 0, 0},
	} {
		if got := replyTokens(c.asked, c.role); got != c.want {
			t.Errorf("replyTokens(%d, %d) = %d, want %d", c.asked, c.role, got, c.want)
		}
	}
}

// Every role's prompt after a Shared start begins with the same bytes, and
// the shared head is never cut again by a role's packing.
func TestComposeAfterKeepsTheSharedStart(t *testing.T) {
	t.Parallel()
	fs := fstest.MapFS{
		"shared.tmpl":       {Data: []byte("You are on the team.")},
		"task_planner.tmpl": {Data: []byte("You are the TaskPlanner for {{.Project}}.\n{{define \"instructions\"}}Plan {{.Milestone}}.{{end}}")},
		"qa.tmpl":           {Data: []byte("You are QA.")},
	}
	c, err := NewComposer(fs, "", "GLOBAL", "")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := c.Shared(2000, Section{Title: "PROJECT CONTEXT", Body: strings.Repeat("tree line\n", 50), Priority: 20},
		Section{Title: "PROJECT KNOWLEDGE", Body: "rules", Priority: 30})
	if err != nil {
		t.Fatal(err)
	}
	if sh.System != "GLOBAL\n\nYou are on the team." || !strings.HasPrefix(sh.Head, "## PROJECT CONTEXT\ntree line") {
		t.Fatalf("shared %+v", sh)
	}
	planner, err := c.ComposeAfter(sh, "task_planner", plannerData{"x", "M1"}, sh.Tokens+60,
		Section{Title: "COMPLETED WORK", Body: strings.Repeat("history\n", 200), Priority: 10})
	if err != nil {
		t.Fatal(err)
	}
	qa, err := c.ComposeAfter(sh, "qa", nil, 0, Section{Title: "DIFF", Body: "+x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Prompt{planner, qa} {
		if p.Messages[0].Content != sh.System || !strings.HasPrefix(p.Messages[1].Content, sh.Head+"\n\n## ROLE\n") {
			t.Errorf("prompt does not start with the shared bytes:\n%.200s", p.Messages[1].Content)
		}
	}
	if !strings.Contains(planner.Messages[1].Content, "## INSTRUCTIONS\nPlan M1.") || len(planner.Dropped) == 0 {
		t.Errorf("the role's part is packed to what the budget leaves: dropped %v", planner.Dropped)
	}
	if _, err := c.ComposeAfter(sh, "task_planner", plannerData{}, sh.Tokens+5); err == nil {
		t.Error("a budget the shared start and the role's required parts do not fit must be an error")
	}
}
