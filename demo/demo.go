// Package demo runs the real lemmings workflow on a small sample repository
// against a scripted model server, so the whole thing can be seen working
// without a GPU or a cloud key. Nothing but the models is pretend: the git
// worktree, the gates (go build, vet, test), the commits, the checkpoints and
// the report are real.
package demo

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/run"
)

// Remit is what the demo asks of the team.
const Remit = "Make the test suite pass, then add TopWords (the most frequent words) to the package and a -top flag to the textstats command."

// Model names the scripted server pretends to have pulled. The embedder is
// named for what it is: its name is recorded with the index a demo leaves
// (`lemmings index` in the demo's folder names it), and its vectors are
// nothing like a real embedding model's.
const (
	PrimaryModel    = "qwen2.5-coder:14b"
	SummarizerModel = "qwen2.5-coder:1.5b"
	EmbeddingModel  = "demo-scripted-embedder"
	SupervisorModel = "anthropic/claude-sonnet-4.5"
)

//go:embed all:testdata/repo
var sample embed.FS

// Options tune a demo run.
type Options struct {
	// Dir receives the sample repository; it must not exist or be empty.
	Dir   string
	Sinks []graph.Sink
	Warn  io.Writer
	// NoSupervisors runs the loop alone; Blocking runs supervisors inside the
	// graph step instead of in the background.
	NoSupervisors bool
	Blocking      bool
	// Script is the scripted model; nil uses a default one.
	Script *Script
	// Pipeline is pipeline.mode ("auto", "quick", "full"); empty keeps the
	// configuration's.
	Pipeline string
}

// Run prepares the sample repository in o.Dir, starts the scripted model
// server in-process and runs the workflow on it.
func Run(ctx context.Context, o Options) (run.Result, error) {
	if err := PrepareRepo(ctx, o.Dir); err != nil {
		return run.Result{}, err
	}
	sc := o.Script
	if sc == nil {
		sc = &Script{}
	}
	srv := NewServer(sc)
	defer srv.Close()
	cfg := Config(srv.URL())
	cfg.Supervisors.Enabled = !o.NoSupervisors
	if o.Blocking {
		cfg.Supervisors.Mode = "blocking"
	}
	if o.Pipeline != "" {
		cfg.Pipeline.Mode = o.Pipeline
	}
	return run.Start(ctx, run.Options{RepoDir: o.Dir, Remit: Remit, Config: cfg, Sinks: o.Sinks, Warn: o.Warn, Demo: true})
}

// NewServer starts the scripted model server with the demo's models. Steps in
// first are tried before the demo script (tests use them to inject faults).
func NewServer(sc *Script, first ...llmtest.Step) *llmtest.Server {
	srv := llmtest.NewServer(llmtest.WithModels(
		llmtest.ModelInfo{Name: PrimaryModel, ContextLength: 32768},
		llmtest.ModelInfo{Name: SummarizerModel, ContextLength: 32768},
		llmtest.ModelInfo{Name: EmbeddingModel, ContextLength: 8192, Capabilities: []string{"embedding"}},
	))
	srv.Script(append(first, sc.Steps()...)...)
	return srv
}

// Config points every role at the scripted server: Ollama's API for the local
// roles, the OpenAI-compatible API for the supervisors.
func Config(url string) *config.Config {
	c := config.Default()
	c.Ollama.Host = url
	c.OpenRouter.BaseURL = url + "/v1"
	c.OpenRouter.APIKey = "demo-key-not-a-secret"
	for name, model := range map[string]string{
		config.RolePrimary: PrimaryModel, config.RoleSummarizer: SummarizerModel,
		config.RoleEmbedding: EmbeddingModel, config.RoleSupervisor: SupervisorModel,
	} {
		r := c.Roles[name]
		r.Model = model
		c.Roles[name] = r
	}
	p := c.Roles[config.RolePrimary]
	p.EditProtocol = "json" // the script writes its code inside the JSON actions
	c.Roles[config.RolePrimary] = p
	// The demo tells QA's story: a failing gate goes back to the planner and
	// a second attempt. Fix rounds inside the loop are the implementor's own
	// tests' business.
	c.Limits.FixRounds = 0
	c.Retry.InitialBackoff = 10 * time.Millisecond // the scripted server never needs patience
	return c
}

// PrepareRepo writes the sample repository to dir and makes its first commit.
func PrepareRepo(ctx context.Context, dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("demo: %s is not empty; give a new directory", dir)
	}
	root := "testdata/repo"
	err := fs.WalkDir(sample, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		target := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(rel, ".txt")))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := sample.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("demo: write sample repository: %w", err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=lemmings demo", "-c", "user.email=demo@lemmings.invalid", "commit", "-q", "--no-verify", "-m", "textstats: initial version"},
	} {
		// No hook (the user's hooksPath), filter or nested repository of
		// anyone's runs here (package gitsafe).
		cmd := gitsafe.CommandEnv(ctx, dir, []string{"GIT_CONFIG_NOSYSTEM=1"}, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("demo: git %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}
