package nodes_test

// The implementor measured against the real Ollama server: actions per
// attempt, malformed replies, fix rounds, the share of prompt tokens served
// from the server's cache, wall time. It is a measurement, not a check, so it
// runs only when asked:
//
//	LEMMINGS_MEASURE_IMPL=1 go test ./nodes -run TestMeasureImplementor -v -timeout 60m
//
// LEMMINGS_MEASURE_MODEL=smollm2 loads .tools/models/…/SmolLM2-135M-Instruct
// (make models) instead of the random tiny model; LEMMINGS_MEASURE_ATTEMPTS
// sets attempts per task (default 3), LEMMINGS_MEASURE_TASKS how many of the
// two tasks run, LEMMINGS_MEASURE_ACTIONS the action cap (default 15);
// LEMMINGS_MEASURE_PROTOCOL picks the edit protocol. docs/implementor.md
// quotes the numbers.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// countingModel records every call the implementor makes.
type countingModel struct {
	inner nodes.Model
	mu    sync.Mutex
	calls []measuredCall
}

type measuredCall struct {
	structured bool
	malformed  bool
	doneReason string
	prompt     int
	elapsed    time.Duration
}

func (m *countingModel) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := m.inner.Chat(ctx, req)
	c := measuredCall{structured: len(req.Schema) > 0, doneReason: resp.DoneReason, prompt: resp.Usage.PromptTokens, elapsed: resp.Elapsed}
	if c.structured && err == nil {
		b, xerr := llm.ExtractJSON(resp.Content)
		c.malformed = xerr != nil || !strings.Contains(string(b), `"action"`)
	}
	m.mu.Lock()
	m.calls = append(m.calls, c)
	m.mu.Unlock()
	return resp, err
}

func (m *countingModel) take() []measuredCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.calls
	m.calls = nil
	return out
}

// cacheShare sums prompt and reused tokens over the server's debug lines in
// text (realollama.ParseCacheSlots).
func cacheShare(text string) (prompt, used int) {
	sum := realollama.SumCacheSlots(realollama.ParseCacheSlots(text))
	return sum.Prompt, sum.Used
}

func TestCacheShareReadsTheServersSlotLines(t *testing.T) {
	t.Parallel()
	log := `time=2026-11-24T06:01:02 level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=0 prompt=1200 used=0 remaining=1200
time=2026-11-24T06:01:03 level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=1300 prompt=1500 used=1190 remaining=310
unrelated line prompt=99 used=99`
	p, u := cacheShare(log)
	if p != 2700 || u != 1190 {
		t.Errorf("cacheShare = %d, %d; want 2700, 1190", p, u)
	}
}

func TestMeasureImplementor(t *testing.T) {
	t.Parallel()
	if os.Getenv("LEMMINGS_MEASURE_IMPL") == "" {
		t.Skip("a measurement: set LEMMINGS_MEASURE_IMPL=1 to run it")
	}
	srv := realollama.Start(t, realollama.WithEnv("OLLAMA_DEBUG", "1"))
	ctx := context.Background()
	model, numCtx := srv.Models.Chat, 4096
	if os.Getenv("LEMMINGS_MEASURE_MODEL") == "smollm2" {
		model, numCtx = "smollm2", 8192
		gguf := findFile(t, "SmolLM2-135M-Instruct.Q4_1.gguf")
		modelfile := filepath.Join(t.TempDir(), "Modelfile")
		if err := os.WriteFile(modelfile, []byte("FROM "+gguf+"\n"+chatML), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := srv.Create(ctx, model, modelfile); err != nil {
			t.Fatal(err)
		}
	}
	attempts := envInt("LEMMINGS_MEASURE_ATTEMPTS", 3)
	router, err := llm.NewRouter(llm.RouterConfig{Roles: map[string]llm.RoleSpec{
		nodes.RolePrimary: {Provider: llm.ProviderOllama, Model: model, BaseURL: srv.URL, NumCtx: numCtx, MaxTokens: 768},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer router.Close()
	composer, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingModel{inner: router}

	repoDir := filepath.Join(t.TempDir(), "repo")
	if err := demo.PrepareRepo(ctx, repoDir); err != nil {
		t.Fatal(err)
	}
	repo, err := workspace.OpenRepo(ctx, repoDir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.CreateWorktree(ctx, "measure")
	if err != nil {
		t.Fatal(err)
	}
	set := nodes.DefaultSettings()
	set.TokenBudgets["implementor"] = numCtx - 1200
	set.MaxActions = envInt("LEMMINGS_MEASURE_ACTIONS", 15)
	if p := os.Getenv("LEMMINGS_MEASURE_PROTOCOL"); p != "" {
		setProtocol(&set, p)
	}
	box, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	d := &nodes.Deps{Model: counting, Composer: composer, Work: wt, Gates: workspace.DetectGates(wt.Dir()), Settings: set, Sandbox: box}
	base, err := wt.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tasks := []runstate.Task{
		{Title: "Fix MeanWordLength integer division", Instructions: "MeanWordLength in textstats.go divides integers; convert to float64 before dividing.",
			AcceptanceCriteria: []string{"go test ./... passes"}, TargetFiles: []string{"textstats.go"}},
		{Title: "Add a doc comment to MeanWordLength", Instructions: "Add a one-line doc comment above func MeanWordLength in textstats.go.",
			AcceptanceCriteria: []string{"MeanWordLength has a doc comment"}, TargetFiles: []string{"textstats.go"}},
	}
	var tot struct {
		attempts, actions, calls, malformed, lengthCut, fixRounds, finished int
		wall                                                                time.Duration
		prompt, used                                                        int
	}
	tasks = tasks[:min(len(tasks), envInt("LEMMINGS_MEASURE_TASKS", len(tasks)))]
	for ti, task := range tasks {
		for a := 1; a <= attempts; a++ {
			task := task
			task.ID, task.StartCommit, task.AttemptBase, task.Attempt = fmt.Sprintf("t%d", ti+1), base, base, a
			logBefore := len(srv.Log())
			s := runstate.State{RunID: "measure", CurrentTask: &task}
			t0 := time.Now()
			out, err := d.Implementor(ctx, s)
			wall := time.Since(t0)
			if err != nil {
				t.Fatalf("attempt: %v", err)
			}
			calls := counting.take()
			p, u := cacheShare(srv.Log()[logBefore:])
			res := out.Implementation
			mal, cut := 0, 0
			for _, c := range calls {
				if c.malformed {
					mal++
				}
				if c.doneReason == "length" {
					cut++
				}
			}
			t.Logf("task %d attempt %d: %s after %d actions, %d calls (%d malformed, %d cut at length), fix rounds %d, cache %d/%d = %.0f%%, %v",
				ti+1, a, res.Status, res.Actions, len(calls), mal, cut, fixRounds(res), u, p, pct(u, p), wall.Round(time.Millisecond))
			tot.attempts++
			tot.actions += res.Actions
			tot.calls += len(calls)
			tot.malformed += mal
			tot.lengthCut += cut
			tot.fixRounds += fixRounds(res)
			tot.wall += wall
			tot.prompt += p
			tot.used += u
			if res.Status == runstate.ImplFinished {
				tot.finished++
			}
		}
	}
	n := float64(tot.attempts)
	t.Logf("SUMMARY model=%s attempts=%d finished=%d actions/attempt=%.1f calls/attempt=%.1f malformed/attempt=%.2f length-cut/attempt=%.2f fix-rounds/attempt=%.2f cache=%.0f%% (%d of %d prompt tokens) wall/attempt=%v",
		model, tot.attempts, tot.finished, float64(tot.actions)/n, float64(tot.calls)/n, float64(tot.malformed)/n, float64(tot.lengthCut)/n,
		float64(tot.fixRounds)/n, pct(tot.used, tot.prompt), tot.used, tot.prompt, (tot.wall / time.Duration(tot.attempts)).Round(time.Millisecond))
}

// chatML is SmolLM2's chat template.
const chatML = `TEMPLATE """{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
PARAMETER stop "<|im_end|>"
PARAMETER temperature 0.2
`

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// findFile looks for name under the shared tools folder's models.
func findFile(t *testing.T, name string) string {
	t.Helper()
	root, err := filepath.Abs("../.tools/models")
	if err != nil {
		t.Fatal(err)
	}
	var found string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Skipf("%s not found under %s: run make models", name, root)
	}
	return found
}
