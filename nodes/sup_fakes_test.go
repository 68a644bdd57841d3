package nodes

// In-process stand-ins for the supervisor tests of single nodes: a model
// answering from a function, and the workflow's collaborators on a fresh
// worktree.

import (
	"context"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// supFakeModel answers in-process, for tests of single nodes; answer sees the
// request (its Label says who asks).
type supFakeModel struct {
	mu     sync.Mutex
	answer func(req llm.Request) (string, error)
	reqs   []llm.Request
}

func (m *supFakeModel) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	content, err := m.answer(req)
	if err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Content: content, Usage: llm.Usage{Calls: 1, PromptTokens: 100, CompletionTokens: 10}}, nil
}

func (m *supFakeModel) requests(label string) []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []llm.Request
	for _, r := range m.reqs {
		if r.Label == label {
			out = append(out, r)
		}
	}
	return out
}

func supAnswerAssessor(verdict string) func(llm.Request) (string, error) {
	return func(llm.Request) (string, error) {
		return suptest.JSON(map[string]any{"verdict": verdict, "notes": "scripted", "milestone_complete": false}), nil
	}
}

func supAnswerEmptySupervisor(req llm.Request) (string, error) {
	return suptest.JSON(suptest.EmptySupervisorReply(req.Label)), nil
}

// supDeps builds the workflow's collaborators for single-node tests; with
// work, on a fresh worktree of a sample repository.
func supDeps(t *testing.T, m Model, work bool) *Deps {
	t.Helper()
	composer, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	d := &Deps{Model: m, Composer: composer, Settings: DefaultSettings()}
	if work {
		d.Work = supWorktree(t)
	}
	return d
}

func supWorktree(t *testing.T) *workspace.Worktree {
	t.Helper()
	ctx := context.Background()
	repo, err := workspace.OpenRepo(ctx, suptest.MakeRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.CreateWorktree(ctx, "20260101-000000-sup")
	if err != nil {
		t.Fatal(err)
	}
	return wt
}

// supRunLog returns the supervisor runs of one supervisor.
func supRunLog(s runstate.State, name string) []runstate.SupervisorRun {
	var out []runstate.SupervisorRun
	for _, r := range s.SupervisorRunLog {
		if r.Supervisor == name {
			out = append(out, r)
		}
	}
	return out
}
