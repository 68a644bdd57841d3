package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// A weak model that repeats one token until the server stops it without
// done:true sent a bad reply, not a network fault: Structured asks again at
// once (no backoff) with a new seed, a repeat penalty and more temperature.
func TestStructuredReasksARunawayReplyWithVariedSampling(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(
		llmtest.Step{Name: "runaway", Reply: llmtest.Reply{Content: strings.Repeat(" of", 224), NoDone: true}},
		llmtest.Step{Name: "fine", Reply: llmtest.Reply{Content: `{"decision":"skip","title":"t","files":[],"done":true}`}},
	)
	zero := 0.0
	spec := ollamaRole(srv, "m")
	spec.Temperature = &zero
	spec.Options = map[string]any{"seed": 1}
	r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}, Retry: RetryPolicy{MaxAttempts: 4}})
	got, resp, err := Structured[plan](context.Background(), r, Request{Role: "primary", Messages: userMsg("hello 1")})
	if err != nil || got.Decision != "skip" {
		t.Fatalf("got %+v err %v", got, err)
	}
	if len(clk.Sleeps()) != 0 {
		t.Errorf("backoff sleeps %v: a runaway is not a transport fault", clk.Sleeps())
	}
	calls := srv.ChatCalls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	first, second := calls[0].Options, calls[1].Options
	if first["temperature"] != 0.0 || first["repeat_penalty"] != nil {
		t.Errorf("first call options %v", first)
	}
	if second["seed"] == first["seed"] || second["repeat_penalty"].(float64) <= 1 || second["temperature"].(float64) <= 0 {
		t.Errorf("the re-ask did not vary the sampling: %v then %v", first, second)
	}
	if calls[1].LastUser() != "hello 1" {
		t.Errorf("the runaway was quoted back: %q", calls[1].LastUser())
	}
	if len(resp.Reasks) != 1 || resp.Reasks[0].Stop != StopRunaway {
		t.Errorf("reasks %+v", resp.Reasks)
	}
}

func TestStructuredRunawayTwiceIsTheModelsFailure(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: strings.Repeat(" of", 50), NoDone: true}})
	r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	_, resp, err := Structured[plan](context.Background(), r, Request{Role: "primary", Messages: userMsg("hello 1")})
	var se *StructuredError
	if !errors.As(err, &se) || se.Stop != StopRunaway || se.Attempts != 2 || !Runaway(err) {
		t.Fatalf("error %v", err)
	}
	if n := len(srv.ChatCalls()); n != 2 || len(clk.Sleeps()) != 0 {
		t.Errorf("%d calls, sleeps %v; want 2 calls and no backoff", n, clk.Sleeps())
	}
	if len(resp.Reasks) != 1 {
		t.Errorf("reasks %+v", resp.Reasks)
	}
}

// A reply cut at the length limit is never repaired into a value: the JSON
// repair would close the cut string and a half-written file would reach the
// disk. The re-ask says where it was cut and asks for a smaller change.
func TestStructuredNeverUsesAReplyCutAtTheLengthLimit(t *testing.T) {
	t.Parallel()
	type write struct {
		Action  string `json:"action"`
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	cut := `{"action":"write_file","path":"a.go","content":"func A() int {\n\treturn 1`
	t.Run("re-asked once, the whole reply used", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(
			llmtest.Step{Reply: llmtest.Reply{Content: cut, DoneReason: "length", CompletionTokens: 64}},
			llmtest.Step{Reply: llmtest.Reply{Content: `{"action":"write_file","path":"a.go","content":"package a\n"}`}},
		)
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
		got, resp, err := Structured[write](context.Background(), r, Request{Role: "primary", Messages: userMsg("write a.go"), MaxTokens: 64})
		if err != nil || got.Content != "package a\n" {
			t.Fatalf("got %+v err %v", got, err)
		}
		calls := srv.ChatCalls()
		if len(calls) != 2 || !strings.Contains(calls[1].LastUser(), "cut off at 64 tokens") || !strings.Contains(calls[1].LastUser(), "smaller change") {
			t.Fatalf("re-ask %q", calls[len(calls)-1].LastUser())
		}
		if len(resp.Reasks) != 1 || resp.Reasks[0].Stop != StopLength || resp.Reasks[0].Tokens != 64 || resp.Usage.Calls != 2 {
			t.Errorf("reasks %+v usage %+v", resp.Reasks, resp.Usage)
		}
	})
	t.Run("cut twice: a typed error, no value", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: cut, DoneReason: "length", CompletionTokens: 64}})
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
		got, _, err := Structured[write](context.Background(), r, Request{Role: "primary", Messages: userMsg("write a.go")})
		tokens, cutOff := CutOff(err)
		var se *StructuredError
		if !errors.As(err, &se) || !cutOff || tokens != 64 || se.Stop != StopLength || got.Content != "" {
			t.Fatalf("got %+v err %v", got, err)
		}
	})
}

func TestTextNeverReturnsACutReplyAsWhole(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(
		llmtest.Step{Reply: llmtest.Reply{Content: "func A() int {\n\treturn 1", DoneReason: "length", CompletionTokens: 30}},
		llmtest.Step{Reply: llmtest.Reply{Content: strings.Repeat(" of", 30), NoDone: true}},
		llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "func B() int {\n\treturn", DoneReason: "length", CompletionTokens: 30}},
	)
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	_, err := Text(context.Background(), r, Request{Role: "primary", Messages: userMsg("write A")})
	if tokens, cut := CutOff(err); cut {
		t.Fatalf("a cut, then a runaway: want the runaway, got cut at %d", tokens)
	}
	if !Runaway(err) {
		t.Fatalf("error %v", err)
	}
	resp, err := Text(context.Background(), r, Request{Role: "primary", Messages: userMsg("write B")})
	var te *TruncatedError
	if !errors.As(err, &te) || te.Tokens != 30 || len(resp.Reasks) != 1 {
		t.Fatalf("error %v, reasks %+v", err, resp.Reasks)
	}
	if last := srv.ChatCalls()[3].LastUser(); !strings.Contains(last, "cut off at 30 tokens") {
		t.Errorf("re-ask %q", last)
	}
}

// OpenAI-compatible servers say "length" in finish_reason: the same rule.
func TestStructuredNeverUsesAnOpenAIReplyCutAtTheLengthLimit(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{API: llmtest.OpenAI, Times: -1, Reply: llmtest.Reply{
		Content: `{"decision":"skip","title":"cut here`, FinishReason: "length", CompletionTokens: 12}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "m")}})
	got, _, err := Structured[plan](context.Background(), r, Request{Role: "supervisor", Messages: userMsg("plan")})
	if tokens, cut := CutOff(err); !cut || tokens != 12 || got.Title != "" {
		t.Fatalf("got %+v err %v", got, err)
	}
	if n := len(srv.ChatCalls()); n != 2 {
		t.Errorf("%d calls, want the call and one re-ask", n)
	}
}

// A request's seed is sent when the role sets none, to Ollama and to an
// OpenAI-compatible server alike; the role's own seed wins.
func TestARequestSeedIsSentUnlessTheRoleSetsOne(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "ok"}})
	seeded := ollamaRole(srv, "m")
	seeded.Options = map[string]any{"seed": 5}
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m"), "seeded": seeded}})
	seed := 3
	for _, role := range []string{"primary", "seeded"} {
		if _, err := r.Chat(context.Background(), Request{Role: role, Messages: userMsg("hi"), Seed: &seed}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("hi")}); err != nil {
		t.Fatal(err)
	}
	calls := srv.ChatCalls()
	if len(calls) != 3 || calls[0].Options["seed"] != 3.0 || calls[1].Options["seed"] != 5.0 || calls[2].Options["seed"] != nil {
		t.Fatalf("seeds sent: %v", func() (s []any) {
			for _, c := range calls {
				s = append(s, c.Options["seed"])
			}
			return
		}())
	}
	creq := (&openaiProvider{spec: RoleSpec{Model: "m"}}).request(Request{Seed: &seed})
	if creq.Seed == nil || *creq.Seed != 3 {
		t.Errorf("the OpenAI request's seed: %v", creq.Seed)
	}
}
