package implementor

import (
	"context"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/gitfixture"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// testPrompts composes with the default templates and no shared prefix
// (the workflow's own is tested in nodes).
type testPrompts struct{ c *llm.Composer }

func newTestPrompts(t *testing.T) testPrompts {
	t.Helper()
	c, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return testPrompts{c}
}

func (p testPrompts) Compose(_ context.Context, _ *runstate.State, data any, secs []llm.Section, budget int) ([]llm.Message, error) {
	pr, err := p.c.Compose(runstate.NodeImplementor, data, budget, secs...)
	return pr.Messages, err
}

func (p testPrompts) ComposeAlone(label string, data any, budget int, secs []llm.Section) (llm.Prompt, error) {
	return p.c.Compose(label, data, budget, secs...)
}

func (testPrompts) Knowledge(context.Context, *runstate.State) llm.Section {
	return llm.Section{Title: prompts.SecProjectKnowledge, Body: "(no project knowledge yet)"}
}

func (testPrompts) Milestone(*runstate.State) llm.Section {
	return llm.Section{Title: prompts.SecMilestone, Body: "(none)", Required: true}
}

func (testPrompts) Bound(map[string]any)                         {}
func (testPrompts) Called(context.Context, string, llm.Response) {}
func (testPrompts) Failed(context.Context, events.ModelError)    {}

// testClock is a clock whose wall time is left, or none when unlimited.
type testClock struct {
	left    time.Duration
	limited bool
}

func (testClock) Now() time.Time { return time.Unix(0, 0) }
func (c testClock) WallTimeLeft(*runstate.State, time.Time) (time.Duration, bool) {
	return c.left, c.limited
}
func (testClock) WallTimeReached() string { return "reached the wall-time limit" }

// testDeps are an Implementor's deps on a work tree of files, on its own
// branch of a fresh repository.
func testDeps(t *testing.T, files map[string]string) *Deps {
	t.Helper()
	ctx := context.Background()
	repo, err := workspace.OpenRepo(ctx, gitfixture.Repo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.CreateWorktree(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	return &Deps{Work: wt, Prompts: newTestPrompts(t), Clock: testClock{}, Parser: ParserFor(),
		Settings: Settings{Budget: 16000, Knobs: Knobs{MaxActions: 12, EditProtocol: EditText, WholeFileLines: WholeFileLinesDefault,
			Samples: 1, SyntaxChecks: map[string]string{".go": ""}}}}
}

// What a fix round repeats of a gate's failure keeps the failing cases and
// the verdict, not the numbered source lines nor the separators they leave
// doubled.
func TestDirectNoteKeepsTheFailuresWithoutTheNumberedSource(t *testing.T) {
	in := "luhn_test.go:30: Valid(\"59\") = false, want true\n" +
		"   29| \t\tif got := Valid(tc.id); got != tc.want {\n" +
		">  30| \t\t\tt.Errorf(\"Valid(%q) = %v\", tc.id, got)\n" +
		"---\n---\nluhn_test.go:30: Valid(\"091\") = false, want true\n--- FAIL: TestValid (0.00s)\n"
	want := "luhn_test.go:30: Valid(\"59\") = false, want true\n---\nluhn_test.go:30: Valid(\"091\") = false, want true\n--- FAIL: TestValid (0.00s)"
	if got := directNote(in); got != want {
		t.Errorf("directNote:\n%s\nwant:\n%s", got, want)
	}
}
