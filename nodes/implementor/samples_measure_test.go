package implementor

// How often a trained weak model's code reply is usable, per grain, on the
// real server: the number behind implementor.samples' default. It is a
// measurement, not a check, so it runs only when asked:
//
//	LEMMINGS_MEASURE_SAMPLES=1 go test ./nodes/implementor -run TestMeasureCodeSamples -v -timeout 60m
//
// LEMMINGS_MEASURE_DRAWS sets the draws per grain (default 4).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
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
	d := testDeps(t, map[string]string{"stats.go": measuredGoFile(120)})
	router, err := llm.NewRouter(llm.RouterConfig{Roles: map[string]llm.RoleSpec{rolePrimary: {
		Provider: llm.ProviderOllama, Model: srv.Trained.Chat, BaseURL: srv.URL, NumCtx: 4096, MaxTokens: 320, Timeout: 10 * time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	defer router.Close()
	d.Model = router
	d.Settings.Budget = 3000
	head, err := d.Work.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task := &runstate.Task{ID: "T1", Attempt: 1, StartCommit: head, AttemptBase: head, Title: "Fix Mean",
		Instructions: "Mean in stats.go divides integers; convert to float64 before dividing.", TargetFiles: []string{"stats.go"}}
	for _, whole := range []bool{false, true} {
		s := runstate.State{RunID: "m", CurrentTask: task}
		l := newImplLoop(d, &s, task)
		if err := l.prefix.buildPrefix(ctx); err != nil {
			t.Fatal(err)
		}
		data, err := d.Work.FS().ReadFile("stats.go")
		if err != nil {
			t.Fatal(err)
		}
		old := string(data)
		act := Action{actionHead: actionHead{Action: "edit", Path: "stats.go", Symbol: "Mean"}}
		g := l.requests.chooseGrain(ctx, act, "stats.go", old, true)
		if whole {
			g = grain{kind: grainWhole}
		}
		msgs := append(l.conv.messages(""), llm.Message{Role: "assistant", Content: actionArgs(act)},
			llm.Message{Role: "user", Content: l.requests.grainInstruction("stats.go", g, true, old) + l.requests.grainView("stats.go", old, true, g)})
		usable, right, tokens := 0, 0, 0
		var wall time.Duration
		for i := 0; i < draws; i++ {
			t0 := time.Now()
			resp, err := l.coder.chatText(ctx, codeRequest{messages: msgs, budget: l.requests.grainReply(old, true, g), sample: i})
			wall += time.Since(t0)
			if err != nil {
				t.Logf("grain %s draw %d: %v", g.kind, i+1, err)
				continue
			}
			tokens += resp.Usage.CompletionTokens
			c := l.coder.readCode(ctx, resp, "stats.go", g, old)
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

// measuredGoFile is a Go file of about n lines with Mean, which divides
// integers, in its middle (nodes' bigGoFile, unfixed).
func measuredGoFile(n int) string {
	var b strings.Builder
	b.WriteString("package stats\n\nimport \"strings\"\n\n")
	i := 0
	helper := func() {
		fmt.Fprintf(&b, "// Helper%d joins its words with %d dashes.\nfunc Helper%d(words []string) string {\n\tsep := strings.Repeat(\"-\", %d)\n\tout := \"\"\n\tfor _, w := range words {\n\t\tout += w + sep\n\t}\n\treturn out\n}\n\n", i, i%5+1, i, i%5+1)
		i++
	}
	for strings.Count(b.String(), "\n") < n/2 {
		helper()
	}
	b.WriteString("// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn float64(total / len(xs))\n}\n\n")
	for strings.Count(b.String(), "\n") < n {
		helper()
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
