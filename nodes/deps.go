package nodes

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Model is what the workflow needs from the llm layer.
type Model interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Searcher is the retrieval the planner and implementor use (rag.Index).
type Searcher interface {
	Search(ctx context.Context, query string, k int, f rag.Filter) ([]rag.Hit, error)
}

// Indexer refreshes the retrieval index from a directory (rag.Index).
type Indexer interface {
	Update(ctx context.Context, root string, opts rag.UpdateOptions) (rag.Stats, error)
}

// Deps are the workflow's collaborators. One Deps serves one run.
type Deps struct {
	Model    Model
	Composer *llm.Composer
	Work     *workspace.Worktree
	Gates    []workspace.Gate
	// Sandbox confines the gates, the syntax checks and the coding CLI. It
	// is required to run any of them: nil is a wiring error they report,
	// not a default sandbox.
	Sandbox *sandbox.Box
	// Search may be nil (no index): the rag_search tool then says so.
	Search Searcher
	// Index, when set, is brought up to date with the work tree after each
	// completed task, so retrieval sees what the run wrote.
	Index    Indexer
	Settings Settings
	// Supervisors runs supervisor jobs; nil when supervisors are off.
	Supervisors *supervisors.Jobs
	Now         func() time.Time
	// RunDir is .lemmings/runs/<run-id>: the run's files (knowledge review
	// requests among them) are there.
	RunDir string
	// Hooks run around every node after the workflow's own (hooks.go): what
	// the caller keeps in step with the state, such as board.md.
	Hooks []Hook
	// WallDeadline is when limits.max_wall_time ends this process's stretch
	// of the run (zero: counted from the run's start). The caller's context
	// is cancelled then too; nodes use it to size what they start.
	WallDeadline time.Time

	// noted: every prompt selects the knowledge again, and what it left out
	// is said once, not per call.
	noted notes
}

// notes are the last text of each note.
type notes struct {
	mu   sync.Mutex
	last map[string]string
}

// once says whether text is new for kind since the last call.
func (n *notes) once(kind, text string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last == nil {
		n.last = map[string]string{}
	}
	if n.last[kind] == text {
		return false
	}
	n.last[kind] = text
	return true
}

func (d *Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// openKnowledge opens the knowledge store of the work tree as it is now, so
// the agents read what supervisors and earlier tasks wrote on the run branch.
func openKnowledge(work *workspace.Worktree, dir string) (*knowledge.Store, []knowledge.Problem, error) {
	if work == nil {
		return nil, nil, errors.New("no work tree")
	}
	return knowledge.Open(work.FS().Root() + "/" + dir)
}
