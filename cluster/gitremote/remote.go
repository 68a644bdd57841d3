// Package gitremote carries a run's git work between the machines that take
// it over from each other, through one shared remote (a bare repository path
// or a URL):
//
//   - before each checkpoint the holder pushes the step's HEAD to an immutable
//     ref, refs/lemmings/<run>/<incarnation>/<step>, and force-moves the run
//     branch lemmings/<run> to it, in one atomic push; the checkpoint names the
//     commit. A fenced old holder may still push its own refs, but no
//     checkpoint names them;
//   - a takeover fetches the commit the last checkpoint names into its repo
//     cache and checks the run branch out there (package run then resets the
//     work tree to it, as a local resume does);
//   - old step refs go when the run's checkpoints are pruned.
package gitremote

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/gitsafe"
)

// Remote is the shared repository, seen from one repository cache.
type Remote struct {
	// URL is the remote: a path to a bare repository or a git URL.
	URL string
	// Backoff is the wait before the second push attempt; it doubles (default 200ms).
	Backoff time.Duration
	// Attempts is how many times a push is tried (default 3).
	Attempts int
}

// StepRef names the ref of one checkpoint's commit.
func StepRef(runID string, incarnation, step int) string {
	return fmt.Sprintf("refs/lemmings/%s/%d/%d", runID, incarnation, step)
}

// BaseRef is where a submitter pushes the commit a run starts from.
func BaseRef(runID string) string { return "refs/lemmings/" + runID + "/base" }

// Branch is the run branch.
func Branch(runID string) string { return "lemmings/" + runID }

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := gitsafe.Command(ctx, dir, args...) // no pre-push or reference-transaction hook, nor anything else the repository's config names, runs
	cmd.Env = append(cmd.Env, "GIT_ASKPASS=true")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// PushBase pushes commit from the submitter's repository at dir as the run's base.
func (r Remote) PushBase(ctx context.Context, dir, runID, commit string) error {
	return r.push(ctx, dir, commit+":"+BaseRef(runID))
}

// PushStep pushes head from the work tree at dir to the step's ref and moves
// the run branch there, atomically, retrying with backoff. It returns the ref.
func (r Remote) PushStep(ctx context.Context, dir, runID string, incarnation, step int, head string) (string, error) {
	ref := StepRef(runID, incarnation, step)
	return ref, r.push(ctx, dir, head+":"+ref, "+"+head+":refs/heads/"+Branch(runID))
}

func (r Remote) push(ctx context.Context, dir string, specs ...string) error {
	attempts, wait := max(r.Attempts, 1), r.Backoff
	if r.Attempts == 0 {
		attempts = 3
	}
	if wait <= 0 {
		wait = 200 * time.Millisecond
	}
	var err error
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("push to %s: %w (after %v)", r.URL, ctx.Err(), err)
			case <-time.After(wait):
			}
			wait *= 2
		}
		if _, err = git(ctx, dir, append([]string{"push", "--quiet", "--atomic", r.URL}, specs...)...); err == nil {
			return nil
		}
	}
	return fmt.Errorf("push to the shared remote failed %d times: %w", attempts, err)
}

// Checkout makes commit and the run branch available in the repository
// cache at dir: it fetches commit (a takeover, or a run's base) from the
// remote unless the cache has it, and creates the branch at it when the
// cache has none (package run resets an existing branch's work tree).
func (r Remote) Checkout(ctx context.Context, dir, runID, commit string, createBranch bool) error {
	if _, err := git(ctx, dir, "cat-file", "-e", commit+"^{commit}"); err != nil {
		if _, err := git(ctx, dir, "fetch", "--quiet", "--no-tags", r.URL, "+refs/lemmings/"+runID+"/*:refs/lemmings/"+runID+"/*"); err != nil {
			return fmt.Errorf("fetch run %s from %s: %w", runID, r.URL, err)
		}
		if _, err := git(ctx, dir, "cat-file", "-e", commit+"^{commit}"); err != nil {
			return fmt.Errorf("run %s: commit %s is not on the shared remote %s", runID, commit, r.URL)
		}
	}
	if !createBranch {
		return nil
	}
	if _, err := git(ctx, dir, "show-ref", "--verify", "--quiet", "refs/heads/"+Branch(runID)); err == nil {
		return nil
	}
	_, err := git(ctx, dir, "branch", Branch(runID), commit)
	return err
}

// PruneRefs deletes the run's step refs on the remote that keep does not
// want (given the ref and its commit; the base ref always stays); it
// returns how many went.
func (r Remote) PruneRefs(ctx context.Context, dir, runID string, keep func(ref, commit string) bool) (int, error) {
	out, err := git(ctx, dir, "ls-remote", r.URL, "refs/lemmings/"+runID+"/*")
	if err != nil {
		return 0, err
	}
	var del []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || f[1] == BaseRef(runID) || keep(f[1], f[0]) {
			continue
		}
		del = append(del, ":"+f[1])
	}
	if len(del) == 0 {
		return 0, nil
	}
	if _, err := git(ctx, dir, append([]string{"push", "--quiet", r.URL}, del...)...); err != nil {
		return 0, err
	}
	return len(del), nil
}

// StepOf reads the step back from a step ref (-1 if it is not one).
func StepOf(ref string) int {
	i := strings.LastIndexByte(ref, '/')
	n, err := strconv.Atoi(ref[i+1:])
	if err != nil {
		return -1
	}
	return n
}
