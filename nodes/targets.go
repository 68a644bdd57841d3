package nodes

// A planned target that does not exist while exactly one file of that name
// does is that file: a small planner writes `files/textstats.go` for the
// repository's `textstats.go` (the schema's key taken as a folder,
// docs/testing-real-models.md), and the Implementor would create the new
// file and leave the real one as it was. A target no file of that name
// matches is a file to create, and stays.

import (
	"context"
	"fmt"
	"path"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/workspace"
)

// targetIndex maps a base name to the repository's files of that name.
type targetIndex struct {
	work    *workspace.Worktree
	byName  map[string][]string
	present map[string]bool
}

func (x *targetIndex) load() {
	if x.byName != nil {
		return
	}
	x.byName, x.present = map[string][]string{}, map[string]bool{}
	entries, _ := x.work.FS().List(".", locateMaxFiles) // a truncated list still names what it holds
	for _, e := range entries {
		if e.Dir {
			continue
		}
		x.present[e.Path] = true
		x.byName[path.Base(e.Path)] = append(x.byName[path.Base(e.Path)], e.Path)
	}
}

// resolve returns files with each missing one that names exactly one
// existing file taken as that file, and says so in the event log.
func (x *targetIndex) resolve(ctx context.Context, task string, files []string) []string {
	if len(files) == 0 || x.work == nil {
		return files
	}
	x.load()
	out := make([]string, 0, len(files))
	for _, f := range cleanFiles(files) {
		if same := x.byName[path.Base(f)]; !x.present[f] && len(same) == 1 {
			events.Emit(ctx, events.Warning{Message: fmt.Sprintf("task %q: planned target %s does not exist; taken as %s, the one file of that name", textutil.ClipTrimmed(task, 60), f, same[0])})
			f = same[0]
		}
		out = appendNew(out, f)
	}
	return out
}

// resolveSpecs resolves the targets of planned tasks in place.
func (x *targetIndex) resolveSpecs(ctx context.Context, ts []taskSpec) {
	for i := range ts {
		ts[i].TargetFiles = x.resolve(ctx, ts[i].Title, ts[i].TargetFiles)
	}
}

// resolvePlannerTargets resolves every task of a planner's answer.
func resolvePlannerTargets(ctx context.Context, work *workspace.Worktree, r plannerReply) plannerReply {
	x := &targetIndex{work: work}
	if r.Task != nil {
		t := *r.Task
		t.TargetFiles = x.resolve(ctx, t.Title, t.TargetFiles)
		r.Task = &t
	}
	r.Subtasks = append([]taskSpec(nil), r.Subtasks...)
	x.resolveSpecs(ctx, r.Subtasks)
	r.CarryForward = append([]taskSpec(nil), r.CarryForward...)
	x.resolveSpecs(ctx, r.CarryForward)
	return r
}

// resolveScopeTargets resolves every task of the ScopeAgent's milestones.
func resolveScopeTargets(ctx context.Context, work *workspace.Worktree, r scopeReply) scopeReply {
	x := &targetIndex{work: work}
	ms := append([]milestoneSpec(nil), r.Milestones...)
	for i := range ms {
		ms[i].Tasks = append([]taskSpec(nil), ms[i].Tasks...)
		x.resolveSpecs(ctx, ms[i].Tasks)
	}
	r.Milestones = ms
	return r
}
