package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/sandbox"
)

// Options say what to evaluate and how.
type Options struct {
	Dirs      []string
	Languages Languages // nil: DefaultLanguages
	Solver    Solver
	// Out is the eval's folder: results.json, report.md, chart.svg and the
	// work folders. An eval found there is resumed.
	Out string
	// Label names the eval in the report (the model, or "oracle").
	Label string
	Model string
	// Implementor is recorded with the results (who did the implementor's
	// work); evals of different implementors are not mixed in one folder.
	Implementor string
	// Filter keeps the exercises whose ID ("go/hello-world") it matches;
	// Limit keeps the first n of those (0: all).
	Filter *regexp.Regexp
	Limit  int
	// Parallel exercises at once (0: 1).
	Parallel int
	// MaxAttempts is 2 for pass@2 (the default), 1 for pass@1 only.
	MaxAttempts int
	// TestTimeout bounds one run of an exercise's tests (0: 3 minutes).
	TestTimeout time.Duration
	// Sandbox confines the runs of the exercises' tests. Required: nil is a
	// wiring error, not a default sandbox.
	Sandbox *sandbox.Box
	// Fresh discards the results found in Out instead of resuming them.
	Fresh bool
	// KeepWork keeps the work folders of passed exercises too (those of
	// failed ones are always kept for inspection).
	KeepWork bool

	// OnPlan is told how many exercises will run and how many were resumed
	// from an earlier, stopped eval; OnStart and OnResult follow each one.
	// They may be called from several goroutines, one at a time.
	OnPlan   func(total, resumed int)
	OnStart  func(id string)
	OnResult func(r Result)
}

// ErrOtherEval is returned when Out holds an eval run with another solver,
// model or attempt count.
var ErrOtherEval = errors.New("the output folder holds another eval")

// Run evaluates the exercises under o.Dirs with o.Solver, writing the
// results, the report and the chart to o.Out after every exercise. Problems
// with one exercise are results (skipped, failed, error), never an error of
// the eval; Run's error is for a cancelled context, a solver that cannot
// work at all, or an output folder it cannot write.
func Run(ctx context.Context, o Options) (*File, error) {
	if o.Solver == nil {
		return nil, errors.New("eval: no solver")
	}
	if o.Sandbox == nil {
		return nil, errors.New("eval: no sandbox to run the exercises' tests in (a wiring error: Options.Sandbox must be set)")
	}
	if o.Languages == nil {
		o.Languages = DefaultLanguages()
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 2
	}
	if o.Parallel <= 0 {
		o.Parallel = 1
	}
	if o.TestTimeout <= 0 {
		o.TestTimeout = 3 * time.Minute
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("eval output folder: %w", err)
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	o.Out = out
	// The work folders hold the solvers' code and what its tests leave
	// (failed exercises' are kept): readable by the user only, one an
	// earlier eval left narrowed now, a new one made so by the first
	// exercise (privateWork).
	if fi, err := os.Lstat(filepath.Join(o.Out, WorkDir)); err == nil && fi.IsDir() {
		if err := os.Chmod(filepath.Join(o.Out, WorkDir), 0o700); err != nil {
			return nil, fmt.Errorf("eval work folder: make it private: %w", err)
		}
	}

	f, err := o.open()
	if err != nil {
		return nil, err
	}
	exs, skips := Discover(o.Dirs, o.Languages)
	exs, skips = o.choose(exs, skips)

	done := map[string]bool{}
	for _, r := range f.Results {
		if r.Scored() {
			done[r.ID] = true
		}
	}
	var todo []Exercise
	resumed := 0
	for _, ex := range exs {
		if done[ex.ID] {
			resumed++
			continue
		}
		todo = append(todo, ex)
	}
	e := &evalRun{o: o, file: f, tools: &toolchains{}}
	for _, s := range skips {
		e.record(Result{ID: s.ID, Dir: s.Dir, Status: StatusSkipped, Reason: s.Reason, Fix: s.Fix, Finished: time.Now().UTC()})
	}
	if err := e.saveErr(); err != nil {
		return f, err
	}
	if o.OnPlan != nil {
		o.OnPlan(len(todo)+len(skips)+resumed, resumed)
	}
	for _, s := range skips {
		e.notify(Result{ID: s.ID, Dir: s.Dir, Status: StatusSkipped, Reason: s.Reason, Fix: s.Fix})
	}
	if len(todo) > 0 {
		if p, ok := o.Solver.(Preflighter); ok {
			if err := p.Preflight(ctx); err != nil {
				return f, err
			}
		}
	}

	jobs := make(chan Exercise)
	var wg sync.WaitGroup
	for range min(o.Parallel, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ex := range jobs {
				if o.OnStart != nil {
					e.mu.Lock()
					o.OnStart(ex.ID)
					e.mu.Unlock()
				}
				r, ok := e.exercise(ctx, ex)
				if !ok {
					continue // interrupted: a resumed eval runs it again
				}
				e.record(r)
				e.notify(r)
			}
		}()
	}
feed:
	for _, ex := range todo {
		select {
		case jobs <- ex:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := e.saveErr(); err != nil {
		return f, err
	}
	if err := ctx.Err(); err != nil {
		return f, context.Cause(ctx)
	}
	return f, nil
}

// open loads the eval found in o.Out, or starts a new one.
func (o Options) open() (*File, error) {
	path := filepath.Join(o.Out, ResultsFile)
	fresh := &File{Version: FileVersion, Label: o.Label, Solver: o.Solver.Name(), Model: o.Model, Implementor: o.Implementor,
		MaxAttempts: o.MaxAttempts, Dirs: o.Dirs, Started: time.Now().UTC()}
	if o.Fresh {
		return fresh, nil
	}
	f, err := Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resume the eval in %s: %w (--fresh starts over)", o.Out, err)
	}
	if f.Solver != fresh.Solver || f.Model != fresh.Model || f.Implementor != fresh.Implementor || f.MaxAttempts != fresh.MaxAttempts {
		return nil, fmt.Errorf("%w: %s is an eval of %s, not of %s: give another --out, or --fresh to start over",
			ErrOtherEval, path, f.what(), fresh.what())
	}
	// Only verdicts are kept: skips and errors are tried again.
	kept := f.Results[:0]
	for _, r := range f.Results {
		if r.Scored() {
			kept = append(kept, r)
		}
	}
	f.Results = kept
	f.Label = o.Label
	return f, nil
}

// select_ applies the filter and the limit; folders without any exercise
// are always reported.
func (o Options) choose(exs []Exercise, skips []Skip) ([]Exercise, []Skip) {
	keep := func(id string) bool { return o.Filter == nil || o.Filter.MatchString(id) }
	var outEx []Exercise
	var outSkip []Skip
	n := 0
	limited := func() bool { return o.Limit > 0 && n >= o.Limit }
	// Exercises and skipped exercises count together, in ID order.
	i, j := 0, 0
	for i < len(exs) || j < len(skips) {
		if j < len(skips) && (i >= len(exs) || skips[j].ID < exs[i].ID) {
			s := skips[j]
			j++
			if s.Folder {
				outSkip = append(outSkip, s)
			} else if keep(s.ID) && !limited() {
				outSkip = append(outSkip, s)
				n++
			}
			continue
		}
		ex := exs[i]
		i++
		if keep(ex.ID) && !limited() {
			outEx = append(outEx, ex)
			n++
		}
	}
	return outEx, outSkip
}

// evalRun is one Run in progress.
type evalRun struct {
	o     Options
	tools *toolchains
	mu    sync.Mutex
	file  *File
	err   error // the first failure to write the results
}

// privateWork makes an exercise's work folder, under the eval's work
// folder, readable by the user only (0700, the work folder too).
func (e *evalRun) privateWork(work string) error {
	top := filepath.Join(e.o.Out, WorkDir)
	if err := os.MkdirAll(top, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(top, 0o700); err != nil {
		return err
	}
	return os.MkdirAll(work, 0o700)
}

func (e *evalRun) record(r Result) {
	e.mu.Lock()
	defer e.mu.Unlock()
	replaced := false
	for i := range e.file.Results {
		if e.file.Results[i].ID == r.ID {
			e.file.Results[i], replaced = r, true
		}
	}
	if !replaced {
		e.file.Results = append(e.file.Results, r)
	}
	e.file.Updated = time.Now().UTC()
	if err := e.file.save(e.o.Out); err != nil && e.err == nil {
		e.err = err
	}
}

func (e *evalRun) notify(r Result) {
	if e.o.OnResult == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.o.OnResult(r)
}

// oracle reports whether the solver is the reference solution: its failures
// are the toolchain's.
func (e *evalRun) oracle() bool { return e.o.Solver.Name() == OracleName }

func (e *evalRun) saveErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	e.file.Updated = time.Now().UTC()
	return e.file.save(e.o.Out)
}

// exercise runs one exercise; ok is false when it was interrupted.
func (e *evalRun) exercise(ctx context.Context, ex Exercise) (r Result, ok bool) {
	start := time.Now()
	lang := ex.language(e.o.Languages)
	r = Result{ID: ex.ID, Language: ex.Language, Slug: ex.Slug, Dir: ex.Dir}
	finish := func(status, reason string) (Result, bool) {
		r.Status, r.Reason = status, reason
		r.WallSeconds = time.Since(start).Seconds()
		r.Finished = time.Now().UTC()
		return r, true
	}
	if err := e.tools.check(ctx, e.o.Sandbox, lang); err != nil {
		if ctx.Err() != nil {
			return r, false
		}
		r.Fix = lang.Install
		return finish(StatusSkipped, "toolchain for "+lang.Name+" missing: "+err.Error())
	}
	if ex.Task != nil {
		return e.task(ctx, ex, lang, start)
	}
	work := filepath.Join(e.o.Out, WorkDir, filepath.FromSlash(ex.ID))
	repo, testDir := filepath.Join(work, "repo"), filepath.Join(work, "test")
	r.WorkDir = work
	if err := e.privateWork(work); err != nil {
		return finish(StatusError, "prepare the exercise: "+err.Error())
	}
	if err := prepareRepo(ctx, ex, lang, repo); err != nil {
		if ctx.Err() != nil {
			return r, false
		}
		return finish(StatusError, "prepare the exercise: "+err.Error())
	}
	feedback := ""
	var last testOutcome
	for n := 1; n <= e.o.MaxAttempts; n++ {
		a := Attempt{Exercise: ex, Language: lang, Number: n, Repo: repo, Remit: Remit(ex, lang, feedback), Feedback: feedback}
		out, err := e.o.Solver.Solve(ctx, a)
		if ctx.Err() != nil {
			return r, false
		}
		r.Attempts = n
		if err != nil {
			return finish(StatusError, fmt.Sprintf("attempt %d could not run: %v", n, err))
		}
		r.Runs = append(r.Runs, out)
		r.PromptTokens += out.PromptTokens
		r.PromptCached += out.PromptCached
		r.CompletionTokens += out.CompletionTokens
		r.CostUSD += out.CostUSD
		r.Calls += out.Calls
		r.ModelSeconds += out.ModelSeconds
		last, err = runTests(ctx, e.o.Sandbox, ex, lang, repo, testDir, e.o.TestTimeout)
		if ctx.Err() != nil {
			return r, false
		}
		if err != nil {
			return finish(StatusError, "run the tests: "+err.Error())
		}
		r.TestSeconds += last.Duration.Seconds()
		if last.Passed {
			r.PassedAttempt, r.Pass1, r.Pass2 = n, n == 1, true
			r.TestOutput = ""
			if !e.o.KeepWork {
				_ = os.RemoveAll(work)
				r.WorkDir = ""
			}
			return finish(StatusPassed, "")
		}
		r.TestOutput = last.Output
		feedback = withoutDir(last.Output, testDir)
		if e.oracle() {
			break // the reference solution will not do better a second time
		}
	}
	reason := "tests failed: " + KeyLine(last.Output)
	if lr := r.Runs[len(r.Runs)-1]; lr.Error != "" {
		reason += "; solver: " + textutil.FirstLine(lr.Error)
	} else if lr.Outcome != "" && lr.Outcome != "done" {
		reason += "; lemmings run " + lr.Outcome
		if lr.StopReason != "" {
			reason += " (" + textutil.FirstLine(lr.StopReason) + ")"
		}
	}
	if e.oracle() {
		r.Toolchain = true
		r.Fix = "the reference solution fails its own tests: check the " + lang.Name + " toolchain (`" + lang.Test + "` in " + testDir + ") or the exercise"
	}
	return finish(StatusFailed, reason)
}

var keyLinePatterns = regexp.MustCompile(`(?i)(--- FAIL|^FAIL\b|FAILED|error\[|\berror:|panic:|undefined|AssertionError|Traceback|✕|●|not ok|cannot find|SyntaxError|expected)`)

// KeyLine picks the line of test output that best says what failed.
func KeyLine(out string) string {
	lines := strings.Split(out, "\n")
	pick := ""
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && keyLinePatterns.MatchString(l) {
			pick = l
			break
		}
	}
	if pick == "" {
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" {
				pick = l
				break
			}
		}
	}
	if pick == "" {
		return "(no output)"
	}
	if r := []rune(pick); len(r) > 160 {
		pick = string(r[:157]) + "…"
	}
	return pick
}

// withoutDir drops dir from the paths in test output, as Aider's benchmark
// does: a Go panic's traceback names every file by its absolute path, noise
// a small model reads instead of the line that failed.
func withoutDir(output, dir string) string {
	return strings.ReplaceAll(output, filepath.ToSlash(dir)+"/", "")
}
