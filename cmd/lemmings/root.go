package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/internal/termsafe"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Exit codes (documented in the README): a run's are decided with its
// status (runstate.ExitCode); bad usage is the command's own.
const (
	exitOK          = runstate.ExitDone
	exitFailed      = runstate.ExitFailed // also a command that could not do its work (Ollama down, not a repository…)
	exitUsage       = 2                   // bad usage or configuration
	exitPaused      = runstate.ExitPaused
	exitInterrupted = runstate.ExitInterrupted
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// app holds the global flags every command shares.
type app struct {
	dir           string
	jsonOut       bool
	offline       bool
	noSupervisors bool
	model         string
	embedModel    string
	// verbose prints the models' replies as they stream (run, resume, demo, log).
	verbose bool
	// demo says the run being summarised is a demo's (not resumable).
	demo   demoMode
	stdout io.Writer
	stderr io.Writer
	// red is the process's redaction, taught here (the environment, the
	// repository's .env values) and passed to the run and the server.
	red *redact.Redactor
	// rawStdout is stdout without redaction, for the one secret lemmings
	// prints on purpose: the access token lemmings serve made for this user.
	rawStdout io.Writer
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	// Everything a command prints goes through the process's redaction:
	// progress, messages, --json, status, log, report.
	red := redact.Default()
	red.LearnEnv(os.Environ())
	a := &app{stdout: safeWriter(red, stdout), stderr: safeWriter(red, stderr), rawStdout: stdout, red: red}
	stdout, stderr = a.stdout, a.stderr
	root := &cobra.Command{
		Use:   "lemmings",
		Short: "Carry out a remit on a repository with a team of local and cloud LLM agents",
		Long: `lemmings carries out a remit on a git repository with a team of LLM agents wired as a
typed state graph: the execution loop runs on local models through Ollama, supervisors
run on cloud models through OpenRouter. Start with lemmings demo (no GPU needed),
then lemmings doctor, and lemmings run "what to do".`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
		// A missing directory is refused before any command can create
		// something in it (demo makes its own directory).
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if c.Name() == "demo" || c.Name() == "help" || c.Name() == "version" {
				return nil
			}
			if err := existingDir("-C", a.dir); err != nil {
				return err
			}
			root := a.repoRoot()
			// A .lemmings that is a link or a file is refused before any
			// command reads or writes through it.
			if err := run.CheckDataDir(root); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			red.LearnRepo(root) // its .env values are secrets too
			// Runs a clone brought along are not lemmings' own: say so once.
			if w := run.CommittedState(root).Warning(); w != "" {
				fmt.Fprintf(a.stderr, "warning: %s\n", w)
			}
			return nil
		},
	}
	root.SetVersionTemplate("lemmings {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVarP(&a.dir, "dir", "C", ".", "repository (or directory) to work on")
	pf.BoolVar(&a.jsonOut, "json", false, "one JSON object per line instead of text")
	pf.BoolVar(&a.offline, "offline", false, "no request leaves for anything but the local Ollama (supervisors off, offline retrieval)")
	pf.BoolVar(&a.noSupervisors, "no-supervisors", false, "run the execution loop without the cloud supervisors")
	pf.StringVar(&a.model, "model", "", "Ollama model for the primary role (this invocation only)")
	pf.StringVar(&a.embedModel, "embed-model", "", "Ollama model for the embedding role (this invocation only)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "print the models' replies as they stream (run, resume, demo, log)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(
		newRunCmd(a), newResumeCmd(a), newHaltCmd(a), newTellCmd(a), newUndoCmd(a), newForkCmd(a), newHistoryCmd(a),
		newStatusCmd(a), newRunsCmd(a), newLogCmd(a), newReportCmd(a), newDirectivesCmd(a), newGraphCmd(a),
		newDoctorCmd(a), newDemoCmd(a), newConfigCmd(a), newKnowledgeCmd(a), newIndexCmd(a), newSearchCmd(a), newCleanCmd(a), newServeCmd(a), newMCPCmd(a), newEvalCmd(a),
		&cobra.Command{
			Use:   "version",
			Short: "Print the lemmings version",
			Args:  cobra.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) {
				if a.jsonOut {
					a.printJSON(map[string]any{"version": versionString()})
					return
				}
				fmt.Fprintln(cmd.OutOrStdout(), "lemmings", versionString())
			},
		},
	)
	root.AddCommand(newWorkerCmd(a))
	wrapForCluster(a, root)
	groupCommand(root)
	usageArgs(root)
	return root
}

func execute(args []string) int {
	root := newRootCmd(os.Stdout, os.Stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	code := exitFailed
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	stderr := safeWriter(redact.Default(), os.Stderr)
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, "lemmings:", msg)
	}
	var le *llm.Error
	if errors.As(err, &le) && le.Hint != "" && !strings.Contains(err.Error(), le.Hint) {
		fmt.Fprintln(stderr, "  fix:", le.Hint)
	}
	return code
}

// safeWriter is w as every command prints to it: terminal-safe
// (internal/termsafe: no control or bidirectional character a model, a
// repository or a stored run wrote reaches the terminal; escaped in
// JSON) and redacted. Cleaned before the redaction, so that no escape
// splits a secret from the rules, and after it, so that a JSON string the
// redaction rewrote is escaped again.
func safeWriter(red *redact.Redactor, w io.Writer) io.Writer {
	return termsafe.Writer(red.Writer(termsafe.Writer(w)))
}

// repoRoot is the top of the git repository around a.dir, or a.dir itself
// when it is not in one.
func (a *app) repoRoot() string {
	abs, err := filepath.Abs(a.dir)
	if err != nil {
		return a.dir
	}
	out, err := gitsafe.Command(context.Background(), abs, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return abs
	}
	return strings.TrimSpace(string(out))
}

// gitRoot opens the repository around a.dir, with the error that says what to do.
func (a *app) gitRoot(ctx context.Context) (string, error) {
	repo, err := workspace.OpenRepo(ctx, a.dir)
	if err != nil {
		return "", err
	}
	return repo.Root(), nil
}

// flagOverrides are the global flags as config keys; only flags the user set.
func (a *app) flagOverrides() map[string]string {
	f := map[string]string{}
	if a.offline {
		f["offline"] = "true"
	}
	if a.noSupervisors {
		f["supervisors.enabled"] = "false"
	}
	if a.model != "" {
		f["roles.primary.model"] = a.model
	}
	if a.embedModel != "" {
		f["roles.embedding.model"] = a.embedModel
	}
	return f
}

// loadConfig reads the configuration for root; problems are usage errors
// naming file, line and key. Warnings go to stderr.
// A warning about supervisors is left to the commands that run them.
func (a *app) loadConfig(root string) (*config.Config, *config.Sources, error) {
	return a.loadConfigFor(root, false, a.flagOverrides())
}

// loadRunConfig is loadConfig for run and resume, where supervisors run.
func (a *app) loadRunConfig(root string) (*config.Config, *config.Sources, error) {
	return a.loadConfigFor(root, true, a.flagOverrides())
}

// loadConfigFor loads with flags as the command-line layer (a resume passes
// the run's recorded choices with this invocation's flags on top). The
// warning that supervisors lack a key is left to the run, which says it when
// it starts: a command that fails first (a missing --remit-file, a run that
// cannot be resumed) is not preceded by it, and doctor has its own line.
// supervisorsRun (run, resume) adds what the project file changed.
func (a *app) loadConfigFor(root string, supervisorsRun bool, flags map[string]string) (*config.Config, *config.Sources, error) {
	cfg, src, err := config.Load(config.LoadOptions{RepoRoot: root, Flags: flags})
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, err: fmt.Errorf("configuration:\n%w", err)}
	}
	run.LearnConfigSecrets(a.red, cfg) // everything this command prints is redacted of them
	for _, w := range src.Warnings() {
		if w.SupervisorsOnly() {
			continue
		}
		fmt.Fprintln(a.stderr, "warning:", w.String())
	}
	if supervisorsRun {
		// A run's first lines name what the repository's project file
		// changed that the user should know (docs/security.md).
		for _, ch := range src.ProjectChanges() {
			fmt.Fprintln(a.stderr, "project file:", ch.String())
		}
	}
	return cfg, src, nil
}

// runExit is the error that exits with a run's code (runstate.ExitCode).
// The summary said why; a done run's own error (after its end) says itself.
func runExit(st runstate.Standing, err error) error {
	code := runstate.ExitCode(st, errors.Is(err, context.Canceled))
	if code == runstate.ExitDone {
		return err
	}
	return &exitError{code: code, err: errors.New("")}
}
