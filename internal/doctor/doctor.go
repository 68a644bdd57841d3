// Package doctor checks that everything a lemmings run needs is in place —
// the repository, the configuration, each model role and its speed, the
// supervisors' key, the coding CLI, the sandbox, the gates and the
// knowledge — and says how to fix what is not (lemmings doctor).
package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Check is one line of the doctor's report.
type Check struct {
	Name   string `json:"check"`
	Status string `json:"status"` // ok | warn | fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Options say where the doctor looks.
type Options struct {
	// Dir is the directory lemmings was started in (-C); Root the
	// repository root assumed when Dir is not in a git repository.
	Dir, Root string
	// Flags are the command line's configuration overrides (key → value).
	Flags map[string]string
}

// Failed counts the checks that failed.
func Failed(checks []Check) int {
	n := 0
	for _, c := range checks {
		if c.Status == "fail" {
			n++
		}
	}
	return n
}

// Run checks everything a run needs, in the order a person fixes them: the
// repository, the configuration, the models (and their speed), the
// supervisors, the planner, the Implementor's backend, the sandbox, the
// gates and the knowledge.
func Run(ctx context.Context, o Options) []Check {
	var out []Check
	add := func(name, status, detail, fix string) { out = append(out, Check{name, status, detail, fix}) }

	root := o.Root
	repo, err := workspace.OpenRepo(ctx, o.Dir)
	switch {
	case err != nil:
		// The error says what to do (git init, a first commit…).
		add("git", "fail", err.Error(), "")
	default:
		root = repo.Root()
		head, _ := repo.HeadCommit(ctx)
		add("git", "ok", fmt.Sprintf("%s at %.10s", root, head), "")
		if dirty, err := repo.Dirty(ctx); err == nil && len(dirty) > 0 {
			add("git changes", "warn", fmt.Sprintf("%d uncommitted change(s); a run starts from HEAD and will not see them", len(dirty)), "commit what the agents should build on")
		}
	}
	if err := checkWritable(filepath.Join(root, run.DataDir)); err != nil {
		add("run data", "fail", err.Error(), "make the repository writable; lemmings keeps its runs in .lemmings/")
	}

	cfg, src, err := config.Load(config.LoadOptions{RepoRoot: root, Flags: o.Flags})
	if err != nil {
		add("config", "fail", strings.ReplaceAll(err.Error(), "\n", "; "), "fix the lines named above (docs/configuration.md lists every key)")
		return out
	}
	files := src.Files()
	detail := "defaults"
	if len(files) > 0 {
		detail = strings.Join(files, ", ")
	}
	add("config", "ok", detail, "")
	for _, w := range src.Warnings() {
		if !w.SupervisorsOnly() { // the supervisors line below says it
			add("config", "warn", w.String(), "")
		}
	}
	// The repository's project file is the repository's word: what it
	// changed that the user should know is named (docs/security.md).
	for _, ch := range src.ProjectChanges() {
		add("project file", "ok", ch.String(), "")
	}

	rc := run.RouterConfigFrom(cfg, cfg.Supervisors.Enabled && !cfg.Offline)
	router, err := llm.NewRouter(rc)
	if err != nil {
		add("models", "fail", err.Error(), "fix the roles in your configuration")
		return out
	}
	defer router.Close()
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	roles := []string{config.RolePrimary, config.RoleSummarizer}
	if cfg.RAG.Enabled && cfg.RAG.Embedder == "ollama" {
		roles = append(roles, config.RoleEmbedding)
	}
	models := modelChecks(cctx, router, cfg, src, roles)
	out = append(out, models...)
	if len(models) > 0 && models[0].Name == "model "+config.RolePrimary && models[0].Status == "ok" {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		if sp := speedCheck(sctx, router, cfg); sp != nil {
			out = append(out, *sp)
		}
		cancel()
		sctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
		if sv := ollamaServerCheck(sctx, cfg); sv != nil {
			out = append(out, *sv)
		}
		cancel()
	}
	switch {
	case cfg.Offline:
		add("supervisors", "ok", "off (offline): nothing leaves for the cloud", "")
	case !cfg.Supervisors.Enabled:
		add("supervisors", "ok", "off (supervisors.enabled: false or --no-supervisors)", "")
	default:
		if err := router.Check(cctx, config.RoleSupervisor); err != nil {
			add("supervisors", "warn", "will be skipped: "+causeOf(err), supervisorFix(err))
		} else {
			r, _ := cfg.ResolvedRole(config.RoleSupervisor)
			add("supervisors", "ok", fmt.Sprintf("%s via %s (key set; budget $%.2f per run)", r.Model, r.Provider, cfg.Supervisors.BudgetUSD), "")
		}
	}

	if pl := plannerCheck(cctx, router, cfg); pl != nil {
		out = append(out, *pl)
	}
	out = append(out, cliChecks(cfg)...)

	out = append(out, sandboxCheck(cfg))
	gates := run.GatesFrom(cfg, root)
	if len(gates) == 0 {
		add("gates", "warn", "none configured or detected: QA can only review diffs", "add gates to lemmings.yaml (e.g. {name: test, command: make test})")
	}
	for _, g := range gates {
		bin := strings.Fields(g.Command)
		if len(bin) == 0 {
			continue
		}
		if _, err := exec.LookPath(bin[0]); err != nil {
			add("gate "+g.Name, "fail", fmt.Sprintf("%q: %s not found on PATH", g.Command, bin[0]), "install "+bin[0]+" or configure the gate's command")
			continue
		}
		detail := g.Command
		if g.Network {
			detail += " (network on in the sandbox)"
		}
		add("gate "+g.Name, "ok", detail, "")
	}

	kdir := filepath.Join(root, cfg.Knowledge.Dir)
	if _, err := os.Stat(kdir); err != nil {
		add("knowledge", "ok", "no "+cfg.Knowledge.Dir+" yet (supervisors bootstrap it; lemmings knowledge init scaffolds it)", "")
	} else if probs := knowledge.Lint(kdir); len(probs) > 0 {
		add("knowledge", "warn", fmt.Sprintf("%d problem(s), first: %s", len(probs), probs[0].String()), "lemmings knowledge lint")
	} else {
		add("knowledge", "ok", cfg.Knowledge.Dir+" lints clean", "")
	}
	return out
}

// checkWritable tries a file in dir, or in its parent when dir does not exist
// yet (the doctor must not leave a .lemmings/ behind in the user's checkout).
func checkWritable(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		dir = filepath.Dir(dir)
	}
	f, err := os.CreateTemp(dir, ".lemmings-doctor-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
