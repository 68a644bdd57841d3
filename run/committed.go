package run

// Run state a repository commits. .lemmings/ is lemmings' record of the
// runs made in this checkout; a repository that commits files under it
// (git add -f .lemmings/checkpoints .lemmings/runs) hands every clone runs
// nobody ran there, with whatever their states, reports and logs say —
// escapes for the terminal, steps for a resume to take. Such runs are not
// lemmings' own: not listed, read, resumed or written, and every command
// warns once. The project files a repository may commit (.lemmings/config.yaml,
// .lemmings/prompts/) are not run state.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
)

// stateDirs are the folders of .lemmings that hold run state.
var stateDirs = []string{CheckpointsDir, RunsDir, "worktrees", IndexDir, "mcp"}

// Committed is the run state git tracks in a repository's .lemmings.
type Committed struct {
	// Runs are the ids of the runs whose checkpoints or records are tracked.
	Runs map[string]bool
	// Paths are the tracked paths under the state folders.
	Paths []string
}

// ErrCommittedRun is the error for a run the repository commits.
var ErrCommittedRun = fmt.Errorf("committed in the repository: lemmings does not read run state that came with the repository")

var committedCache struct {
	sync.Mutex
	byRoot map[string]committedEntry
}

type committedEntry struct {
	at time.Time
	c  Committed
}

// committedTTL bounds how long a long-lived process (serve, mcp) trusts
// what it found: a new commit may add run state.
const committedTTL = 5 * time.Second

// CommittedState lists the run state the repository at root commits
// (nothing outside a git repository, or when git cannot say).
func CommittedState(root string) Committed {
	committedCache.Lock()
	defer committedCache.Unlock()
	if e, ok := committedCache.byRoot[root]; ok && time.Since(e.at) < committedTTL {
		return e.c
	}
	c := Committed{Runs: map[string]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := []string{"ls-files", "-z", "--"}
	for _, d := range stateDirs {
		args = append(args, DataDir+"/"+d)
	}
	if out, err := gitsafe.Command(ctx, root, args...).Output(); err == nil {
		for _, p := range strings.Split(string(out), "\x00") {
			if p == "" {
				continue
			}
			c.Paths = append(c.Paths, p)
			parts := strings.Split(p, "/")
			if len(parts) >= 3 && (parts[1] == CheckpointsDir || parts[1] == RunsDir || parts[1] == "worktrees") {
				c.Runs[parts[2]] = true
			}
		}
	}
	if committedCache.byRoot == nil {
		committedCache.byRoot = map[string]committedEntry{}
	}
	committedCache.byRoot[root] = committedEntry{at: time.Now(), c: c}
	return c
}

// Refuse returns the error for a run the repository commits, else nil.
func (c Committed) Refuse(runID string) error {
	if c.Runs[runID] {
		return fmt.Errorf("run %s is %w (git rm -r --cached %s/%s/%s %s/%s/%s drops it from the index)", runID, ErrCommittedRun,
			DataDir, CheckpointsDir, runID, DataDir, RunsDir, runID)
	}
	return nil
}

// Warning says what the repository commits and what lemmings does about
// it ("" when it commits no run state).
func (c Committed) Warning() string {
	if len(c.Paths) == 0 {
		return ""
	}
	ids := make([]string, 0, len(c.Runs))
	for id := range c.Runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	what := "of run " + strings.Join(ids, ", run ")
	if len(ids) == 0 {
		what = "of no run"
	}
	var dirs []string
	for _, p := range c.Paths {
		parts := strings.SplitN(p, "/", 3)
		if len(parts) >= 2 && !slices.Contains(dirs, parts[0]+"/"+parts[1]) {
			dirs = append(dirs, parts[0]+"/"+parts[1])
		}
	}
	return fmt.Sprintf("the repository commits lemmings run state (%d files under %s, %s): lemmings does not list or read it; git rm -r --cached %s takes it out of the index",
		len(c.Paths), strings.Join(dirs, " and "), what, strings.Join(dirs, " "))
}

// refusing is the store option that leaves the committed runs of root out.
func refusing(root string) graph.FileOption {
	return graph.RefuseRuns(func(id string) error { return CommittedState(root).Refuse(id) })
}

// CheckRunFiles refuses to read the files of a run the repository at root
// commits (its report, events, board).
func CheckRunFiles(root, runID string) error {
	return CommittedState(root).Refuse(filepath.Base(runID))
}
