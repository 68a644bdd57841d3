package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/workspace"
)

// demoMode says how a run's summary should speak of a demo repository.
type demoMode int

const (
	demoNone    demoMode = iota // not a demo
	demoKept                    // demo --dir: the repository stays
	demoRemoved                 // plain demo: the repository is removed on exit
)

// wipPrefix starts the subject of a work-in-progress commit (an attempt not
// yet through QA): such a commit is never finished work.
const wipPrefix = "lemmings wip:"

// mergeAdvice says what of the run's branch can be merged: all of it when the
// run is done and its last commit is finished work, otherwise only up to the
// last finished commit, or nothing.
func mergeAdvice(res run.Result) string {
	s := res.State
	if s.BaseCommit == "" || res.RunDir == "" {
		return fmt.Sprintf("(git log %s)", res.Branch)
	}
	out, err := gitsafe.Command(context.Background(), res.RunDir, "log", "--format=%H%x09%s", s.BaseCommit+".."+res.Branch).Output()
	if err != nil {
		return fmt.Sprintf("(git log %s)", res.Branch)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return "(no commits: nothing to merge)"
	}
	lastFinished := -1
	for i, l := range lines {
		if _, subject, _ := strings.Cut(l, "\t"); !strings.HasPrefix(subject, wipPrefix) {
			lastFinished = i
			break
		}
	}
	switch {
	case lastFinished == 0 && res.Status == graph.StatusDone:
		return fmt.Sprintf("(git log %s; git merge %s)", res.Branch, res.Branch)
	case lastFinished < 0:
		return fmt.Sprintf("(nothing finished yet: its commits are work in progress; git log %s)", res.Branch)
	case lastFinished == 0:
		return fmt.Sprintf("(unfinished run; what is finished so far: git log %s; git merge %s)", res.Branch, res.Branch)
	}
	sha, _, _ := strings.Cut(lines[lastFinished], "\t")
	return fmt.Sprintf("(its last commit is work in progress; merge only the finished part: git merge %.10s)", sha)
}

// printRunFiles names the report and logs that exist (a report is written
// when the run ends; never point at one that is not there).
func (a *app) printRunFiles(res run.Result) {
	if p := res.State.ReportPath; p != "" && fileExists(p) {
		fmt.Fprintf(a.stdout, "report:  %s\n", p)
	}
	if res.RunDir != "" && fileExists(res.RunDir) {
		fmt.Fprintf(a.stdout, "logs:    %s (events.jsonl, prompts.jsonl, board.md)\n", res.RunDir)
	}
}

// summarizeDemo ends a demo's summary: a demo cannot be resumed (its scripted
// model server ended with it) and, without --dir, its repository is gone.
func (a *app) summarizeDemo(res run.Result, err error) {
	w := a.stdout
	if st := res.Standing; st.Resumable {
		fmt.Fprintf(w, "the run is %s; a demo run cannot be resumed (its scripted model server ended with it): run lemmings demo again\n", st.Status)
	}
	if a.demo == demoRemoved {
		fmt.Fprintln(w, "the demo repository is a temporary copy, removed as the demo ends: lemmings demo --dir DIR keeps it for inspection")
		return
	}
	if res.Branch != "" {
		fmt.Fprintf(w, "branch:  %s   %s\n", res.Branch, mergeAdvice(res))
	}
	a.printRunFiles(res)
	if res.RunID != "" {
		fmt.Fprintf(w, "cleanup: lemmings clean %s removes the run's worktree (--branches its branch too)\n", res.RunID)
	}
}

// warnUncommitted says, before a run starts, that changes in the user's
// checkout are not part of it: the run's worktree starts from HEAD.
func (a *app) warnUncommitted(ctx context.Context, root string) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	repo, err := workspace.OpenRepo(cctx, root)
	if err != nil {
		return
	}
	dirty, err := repo.Dirty(cctx)
	if err != nil || len(dirty) == 0 {
		return
	}
	shown := dirty
	if len(shown) > 3 {
		shown = shown[:3]
	}
	more := ""
	if len(dirty) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(dirty)-len(shown))
	}
	fmt.Fprintf(a.stderr, "warning: %d uncommitted change(s) (%s%s): the run starts from your last commit and will not see them; commit them first if the agents should build on them\n",
		len(dirty), strings.Join(shown, ", "), more)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
