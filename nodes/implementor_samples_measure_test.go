package nodes

// How often a trained weak model's code reply is usable, per grain, on the
// real server: the number behind implementor.samples' default. It is a
// measurement, not a check, so it runs only when asked:
//
//	LEMMINGS_MEASURE_SAMPLES=1 go test ./nodes -run TestMeasureCodeSamples -v -timeout 60m
//
// LEMMINGS_MEASURE_DRAWS sets the draws per grain (default 4).

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm"
)

func TestMeasureCodeSamples(t *testing.T) {
	t.Parallel()
	if os.Getenv("LEMMINGS_MEASURE_SAMPLES") == "" {
		t.Skip("a measurement: set LEMMINGS_MEASURE_SAMPLES=1 to run it")
	}
	draws := 4
	if n := os.Getenv("LEMMINGS_MEASURE_DRAWS"); n != "" {
		draws = int(n[0] - '0')
	}
	srv := realollama.Start(t, realollama.WithTrainedModels())
	ctx := context.Background()
	r := newWeakRun(t, EditText, map[string]string{"stats.go": bigGoFile(120, false)})
	router, err := llm.NewRouter(llm.RouterConfig{Roles: map[string]llm.RoleSpec{RolePrimary: {
		Provider: llm.ProviderOllama, Model: srv.Trained.Chat, BaseURL: srv.URL, NumCtx: 4096, MaxTokens: 320, Timeout: 10 * time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	defer router.Close()
	r.d.Model = router
	r.d.Settings.TokenBudgets = map[string]int{NodeImplementor: 3000}
	r.task.Title, r.task.Instructions, r.task.TargetFiles = "Fix Mean", "Mean in stats.go divides integers; convert to float64 before dividing.", []string{"stats.go"}
	for _, whole := range []bool{false, true} {
		s := WorkflowState{RunID: "m", CurrentTask: r.task}
		l := newImplLoop(r.d, &s, r.task)
		if err := l.buildPrefix(ctx); err != nil {
			t.Fatal(err)
		}
		old := r.file(t, "stats.go")
		act := implAction{actionHead: actionHead{Action: "edit", Path: "stats.go", Symbol: "Mean"}}
		g := l.chooseGrain(ctx, act, "stats.go", old, true)
		if whole {
			g = grain{kind: grainWhole}
		}
		msgs := append(l.messages(""), llm.Message{Role: "assistant", Content: actionArgs(act)},
			llm.Message{Role: "user", Content: l.grainInstruction("stats.go", g, true, old) + l.grainView("stats.go", old, true, g)})
		usable, right, tokens := 0, 0, 0
		var wall time.Duration
		for i := 0; i < draws; i++ {
			t0 := time.Now()
			resp, err := l.chatText(ctx, msgs, i)
			wall += time.Since(t0)
			if err != nil {
				t.Logf("grain %s draw %d: %v", g.kind, i+1, err)
				continue
			}
			tokens += resp.Usage.CompletionTokens
			c := l.readCode(ctx, resp, "stats.go", g, old)
			ok := c.problem == "" && c.change.files["stats.go"] != ""
			if ok {
				usable++
				if strings.Contains(c.change.files["stats.go"], "float64(total) / float64(len(xs))") {
					right++
				}
			}
			t.Logf("grain %s draw %d: usable=%v problem=%.120q tokens=%d done=%s %v", g.kind, i+1, ok, c.problem, resp.Usage.CompletionTokens, resp.DoneReason, time.Since(t0).Round(time.Second))
		}
		t.Logf("SAMPLES grain=%s draws=%d usable=%d right=%d reply_tokens/draw=%d wall/draw=%v", g.kind, draws, usable, right, tokens/draws, (wall / time.Duration(draws)).Round(time.Second))
	}
}
