package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/termprogress"
)

func newDemoCmd(a *app) *cobra.Command {
	var blocking bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole workflow on a sample repository against a scripted model server",
		Long: `The demo copies a small Go module (a failing test and a missing feature) to a directory,
starts a scripted model server in-process, and runs the real workflow on it: real worktree,
real go build/vet/test gates, real commits, checkpoints and report. Only the models are
scripted. Without --dir (-C) the repository is a temporary copy removed on exit;
--dir DIR (a new or empty directory) keeps it, with .lemmings/ and the run branch, for
inspection. A demo run cannot be resumed: its scripted server ends with it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The global --dir (-C) names where the demo repository goes.
			keep := cmd.Flags().Changed("dir")
			dir := a.dir
			if !keep {
				tmp, err := os.MkdirTemp("", "lemmings-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = filepath.Join(tmp, "textstats")
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
				return usageErr("--dir %s is not empty: give a new or empty directory for the demo repository", abs)
			} else if err != nil && !os.IsNotExist(err) {
				return usageErr("--dir %s: %v", abs, err)
			}
			a.demo = demoRemoved
			if keep {
				a.demo = demoKept
			}
			if !a.jsonOut {
				fmt.Fprintf(a.stdout, "lemmings demo — the models are SCRIPTED (llm/llmtest), everything else is real.\n")
				where := abs
				if !keep {
					where = "a temporary copy, removed when the demo ends (lemmings demo --dir DIR keeps it)"
				}
				fmt.Fprintf(a.stdout, "repository: %s\nremit: %s\n\n", where, demo.Remit)
			}
			ctx, _, stop := a.stoppable(cmd.Context())
			defer stop()
			prog := termprogress.New(a.stdout, a.jsonOut)
			prog.Verbose, prog.Ephemeral = a.verbose, !keep
			res, err := demo.Run(ctx, demo.Options{Dir: abs, Sinks: []graph.Sink{prog}, Warn: a.stderr,
				NoSupervisors: a.noSupervisors || a.offline, Blocking: blocking})
			prog.Close()
			if res.RunID == "" && err != nil {
				return err
			}
			a.summarize(res, err)
			if !a.jsonOut && keep && res.Branch != "" {
				inspect := fmt.Sprintf("cd %s && git log --stat main..%s", abs, res.Branch)
				if fileExists(res.State.ReportPath) {
					inspect += " && lemmings report"
				}
				fmt.Fprintf(a.stdout, "\ninspect: %s\n", inspect)
			}
			return runExit(res.Standing, err)
		},
	}
	cmd.Flags().BoolVar(&blocking, "blocking", false, "run supervisors inside the graph step instead of in the background")
	return cmd
}
