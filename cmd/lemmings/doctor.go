package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/workspace"
)

// check is one line of the doctor's report.
type check struct {
	Name   string `json:"check"`
	Status string `json:"status"` // ok | warn | fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func newDoctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check that everything a run needs is in place, and say how to fix what is not",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks := a.doctor(cmd.Context())
			failed := 0
			for _, c := range checks {
				if c.Status == "fail" {
					failed++
				}
				if a.jsonOut {
					a.printJSON(c)
					continue
				}
				mark := map[string]string{"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[c.Status]
				fmt.Fprintf(a.stdout, "%s  %-18s %s\n", mark, c.Name, c.Detail)
				if c.Fix != "" {
					fmt.Fprintf(a.stdout, "      %-18s fix: %s\n", "", c.Fix)
				}
			}
			if failed > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("%d check(s) failed", failed)}
			}
			return nil
		},
	}
}

func (a *app) doctor(ctx context.Context) []check {
	var out []check
	add := func(name, status, detail, fix string) { out = append(out, check{name, status, detail, fix}) }

	root := a.repoRoot()
	repo, err := workspace.OpenRepo(ctx, a.dir)
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

	cfg, src, err := config.Load(config.LoadOptions{RepoRoot: root, Flags: a.flagOverrides()})
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
