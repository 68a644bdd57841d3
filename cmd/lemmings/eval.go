package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/eval"
	"github.com/lemmings-dev/lemmings/internal/termprogress"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/sandbox"
)

// evalFlags are lemmings eval's own flags.
type evalFlags struct {
	builtin, oracle, fresh, keepWork bool
	filter, out, implementor         string
	limit, attempts, parallel        int
	fixRounds                        int
	testCommands                     []string
	testTimeout                      time.Duration
}

func newEvalCmd(a *app) *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval [DIR…]",
		Short: "Measure a model with lemmings on exercises (Exercism / Aider polyglot layout) and tasks from real history: pass@1, pass@2",
		Long: `lemmings eval runs every exercise under each DIR (laid out as Exercism's tracks and Aider's
polyglot benchmark lay them out: .docs/instructions.md, .meta/config.json, the stub and the
tests). Each exercise is copied into a fresh git repository without .meta/, lemmings carries
out "make the tests pass" on it, and the eval runs the exercise's tests itself with the test
files restored from the original. A failed first attempt gets a second one that is shown the
test output (pass@2, as Aider's benchmark scores).

A folder with a task.json is a task from real history: a repository before a real change
(base.bundle), the remit, and the change's tests, held back and used only to judge. lemmings
runs on the repository with the remit alone; the judge adds the held-back tests and runs the
repository's tests too. make realtasks builds the public set into .tools/realtasks.

Results go to --out (default lemmings-eval/<model> in the -C folder): results.json, report.md and chart.svg,
rewritten after every exercise; running the same command again resumes a stopped eval.
--builtin runs lemmings' own micro-suite (Go and Python); --oracle puts each exercise's
reference solution in place of a model, to check the harness and the toolchains.
See docs/eval.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runEval(cmd.Context(), args, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.builtin, "builtin", false, "run the built-in micro-suite (15 Go and 9 Python exercises) as well as any DIR")
	fl.BoolVar(&f.oracle, "oracle", false, "use each exercise's reference solution instead of a model: checks the harness and the toolchains")
	fl.StringVar(&f.filter, "filter", "", "only exercises whose ID (language/slug, e.g. go/leap) matches this regular expression")
	fl.IntVar(&f.limit, "limit", 0, "only the first N exercises (after --filter)")
	fl.StringVar(&f.out, "out", "", "the eval's folder (default lemmings-eval/<model>); an eval found there is resumed")
	fl.IntVar(&f.attempts, "attempts", 2, "attempts per exercise: 2 scores pass@2 as Aider does, 1 pass@1 only")
	fl.IntVar(&f.fixRounds, "fix-rounds", 0, "fix rounds inside each run (limits.fix_rounds): 0 makes a run one try, as in Aider's harness, whose failing tests come back in the second attempt; more lets lemmings fix the failing tests inside the run (pass@1 then includes them)")
	fl.IntVar(&f.parallel, "parallel", 0, "exercises at once (default: concurrency.local)")
	fl.StringArrayVar(&f.testCommands, "test-command", nil, "LANGUAGE=COMMAND: test a language with COMMAND (sh -c, in the exercise); repeatable")
	fl.DurationVar(&f.testTimeout, "test-timeout", 3*time.Minute, "time limit of one run of an exercise's tests")
	fl.StringVar(&f.implementor, "implementor", "lemmings", "who works on the exercises: lemmings, cli (implementor.cli as configured) or cli:PRESET (a coding CLI: claude, codex, gemini, qwen)")
	fl.BoolVar(&f.fresh, "fresh", false, "discard the results found in --out and start over")
	fl.BoolVar(&f.keepWork, "keep-work", false, "keep the work folders of passed exercises too (failed ones are always kept)")
	cmd.AddCommand(newEvalCompareCmd(a))
	return cmd
}

func (a *app) runEval(parent context.Context, dirs []string, f evalFlags) error {
	if len(dirs) == 0 && !f.builtin {
		return usageErr("give the folders of exercises: lemmings eval DIR… (e.g. polyglot-benchmark/go/exercises/practice), or --builtin")
	}
	if f.attempts < 1 || f.attempts > 2 {
		return usageErr("--attempts takes 1 or 2, not %d", f.attempts)
	}
	if f.limit < 0 || f.parallel < 0 {
		return usageErr("--limit and --parallel take a number >= 0")
	}
	var filter *regexp.Regexp
	if f.filter != "" {
		re, err := regexp.Compile(f.filter)
		if err != nil {
			return usageErr("--filter %q: %v", f.filter, err)
		}
		filter = re
	}
	langs := eval.DefaultLanguages()
	for _, tc := range f.testCommands {
		name, command, ok := strings.Cut(tc, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(command) == "" {
			return usageErr("--test-command %q: give LANGUAGE=COMMAND, e.g. --test-command go='go test ./...'", tc)
		}
		langs = langs.WithTestCommand(strings.TrimSpace(name), command)
	}
	cfg, _, err := a.loadConfig(a.repoRoot())
	if err != nil {
		return err
	}
	solver, model, err := a.evalSolver(f, cfg)
	if err != nil {
		return err
	}
	label := model
	if f.implementor != "lemmings" {
		label = f.implementor + ":" + model
	}
	if f.oracle {
		label = eval.OracleName
	}
	out := f.out
	if out == "" {
		out = filepath.Join(a.dir, "lemmings-eval", folderName(label))
	}
	if f.builtin {
		b, err := eval.WriteBuiltin(filepath.Join(out, "suite"))
		if err != nil {
			return err
		}
		dirs = append(dirs, b...)
	}
	parallel := f.parallel
	if parallel == 0 {
		parallel = cfg.Concurrency.Local
	}
	attempts := f.attempts
	if f.oracle {
		attempts = 1 // the reference solution does not improve on a second try
	}

	// The exercises' tests run the solver's code: in the sandbox, as gates.
	box, err := run.OpenSandbox(cfg, sandbox.Ephemeral, nil, a.stderr)
	if err != nil {
		return err
	}
	defer box.Close()
	ctx, _, stop := a.stoppable(parent)
	defer stop()
	prog := termprogress.NewEval(a.stdout, a.jsonOut)
	file, err := eval.Run(ctx, eval.Options{
		Dirs: dirs, Languages: langs, Solver: solver, Out: out, Label: label, Model: model, Implementor: implementorOf(solver),
		Filter: filter, Limit: f.limit, Parallel: parallel, MaxAttempts: attempts, TestTimeout: f.testTimeout,
		Fresh: f.fresh, KeepWork: f.keepWork, Sandbox: box,
		OnPlan: prog.Plan, OnStart: prog.Start, OnResult: prog.Result,
	})
	prog.Close()
	if file == nil {
		if errors.Is(err, eval.ErrOtherEval) {
			return usageErr("%v", err)
		}
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		a.evalSummary(file, out)
		fmt.Fprintf(a.stderr, "interrupted: run the same command again to go on where it stopped\n")
		return &exitError{code: exitInterrupted, err: errors.New("")}
	case err != nil:
		return err // the model is not there, or the results cannot be written: no figures to show
	}
	a.evalSummary(file, out)
	t := file.Totals
	if f.oracle && t.Pass1 != t.Exercises {
		return &exitError{code: exitFailed, err: fmt.Errorf("the oracle passed %d of %d exercises: the others are toolchain or layout problems (%s)", t.Pass1, t.Exercises, filepath.Join(out, eval.ReportFile))}
	}
	if t.Errors > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("%d exercises could not run (see %s); run the same command again to retry them", t.Errors, filepath.Join(out, eval.ReportFile))}
	}
	return nil
}

// evalSolver picks who works on the exercises. --implementor is the seam for
// other implementors (e.g. a coding CLI); only lemmings exists today.
func (a *app) evalSolver(f evalFlags, cfg *config.Config) (eval.Solver, string, error) {
	if f.oracle {
		return eval.Oracle{}, "", nil
	}
	model := ""
	if r, err := cfg.ResolvedRole(config.RolePrimary); err == nil {
		model = r.Model
	}
	if f.implementor == "lemmings" {
		return &eval.Lemmings{Config: cfg, FixRounds: f.fixRounds, TestTimeout: f.testTimeout}, model, nil
	}
	return evalCLISolver(f.implementor, cfg)
}

// implementorOf is the implementor recorded with the results ("" for
// lemmings' own).
func implementorOf(s eval.Solver) string {
	if l, ok := s.(*eval.Lemmings); ok {
		return l.Implementor
	}
	return ""
}

var unsafeFolder = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// folderName turns a label (a model name) into a folder name.
func folderName(label string) string {
	s := strings.Trim(unsafeFolder.ReplaceAllString(label, "-"), "-.")
	if s == "" {
		return "eval"
	}
	return s
}

func (a *app) evalSummary(f *eval.File, out string) {
	t := f.Totals
	paths := map[string]string{"results": filepath.Join(out, eval.ResultsFile), "report": filepath.Join(out, eval.ReportFile), "chart": filepath.Join(out, eval.ChartFile)}
	if a.jsonOut {
		a.printJSON(map[string]any{"kind": "eval", "label": f.Label, "solver": f.Solver, "model": f.Model,
			"exercises": t.Exercises, "scored": t.Scored, "pass1": t.Pass1, "pass2": t.Pass2,
			"pass1_rate": t.Rate1(), "pass2_rate": t.Rate2(), "skipped": t.Skipped, "errors": t.Errors,
			"tokens": t.Tokens, "cost_usd": t.CostUSD, "tasks": t.Tasks, "localised": t.Localised,
			"results": paths["results"], "report": paths["report"], "chart": paths["chart"]})
		return
	}
	w := a.stdout
	fmt.Fprintf(w, "\n%s: pass@1 %.1f%% (%d)", f.Label, t.Rate1(), t.Pass1)
	if f.MaxAttempts > 1 {
		fmt.Fprintf(w, " · pass@%d %.1f%% (%d)", f.MaxAttempts, t.Rate2(), t.Pass2)
	}
	fmt.Fprintf(w, " of %d scored exercises", t.Scored)
	if t.Skipped > 0 || t.Errors > 0 {
		fmt.Fprintf(w, "; %d skipped, %d errors (see the report)", t.Skipped, t.Errors)
	}
	fmt.Fprintln(w)
	for _, l := range f.Languages {
		fmt.Fprintf(w, "  %-12s pass@1 %5.1f%%  pass@2 %5.1f%%  of %d  (mean %s)\n", l.Language, l.Rate1(), l.Rate2(), l.Scored, (time.Duration(l.MeanWall() * float64(time.Second))).Round(100*time.Millisecond))
	}
	if t.Tasks > 0 {
		fmt.Fprintf(w, "  localisation: the first attempt changed a file the real change changed in %d of %d tasks\n", t.Localised, t.Tasks)
	}
	fmt.Fprintf(w, "report:  %s\nresults: %s\nchart:   %s\n", paths["report"], paths["results"], paths["chart"])
}

func newEvalCompareCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "compare A B",
		Short: "Show what changed from eval A to eval B, exercise by exercise",
		Long: `Compares two evals (their results.json, or the folders holding it): pass@1, pass@2, time,
tokens and cost, then every exercise whose verdict changed: fixed, broken, better or worse
(passed in fewer or more attempts), only in one of them.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var files [2]*eval.File
			for i, p := range args {
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					p = filepath.Join(p, eval.ResultsFile)
				}
				f, err := eval.Load(p)
				if err != nil {
					return usageErr("%v", err)
				}
				files[i] = f
			}
			c := eval.Compare(files[0], files[1])
			c.A, c.B = c.A+" ("+args[0]+")", c.B+" ("+args[1]+")"
			if a.jsonOut {
				a.printJSON(c)
				return nil
			}
			c.Write(a.stdout)
			return nil
		},
	}
}
