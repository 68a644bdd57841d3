package llm

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// notes collects what an observer hears, in order, with the time heard.
type notes struct {
	mu  sync.Mutex
	all []Note
	log []string // notes and server events interleaved, in the order they happened
}

func (n *notes) observe(_ context.Context, note Note) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all = append(n.all, note)
	n.log = append(n.log, note.Kind)
}

func (n *notes) mark(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log = append(n.log, s)
}

func (n *notes) kinds(kind string) []Note {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Note
	for _, x := range n.all {
		if x.Kind == kind {
			out = append(out, x)
		}
	}
	return out
}

// A streaming reply is heard while it arrives: the start, the first token,
// then the count growing about once a second with its rate, and the text.
func TestAnObserverHearsAStreamingReplyAsItArrives(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	content := strings.Repeat("tok ", 60)
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: content, ChunkDelay: 25 * time.Millisecond, Latency: 50 * time.Millisecond}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	var got notes
	ctx := WithObserver(context.Background(), got.observe)
	resp, err := r.Chat(ctx, Request{Role: "primary", Label: "task_planner", Messages: userMsg("hi")})
	if err != nil || resp.Content != content {
		t.Fatalf("resp %q err %v", resp.Content, err)
	}
	starts, progress := got.kinds(NoteStart), got.kinds(NoteProgress)
	if len(starts) != 1 || starts[0].Label != "task_planner" || starts[0].Model != "m" || starts[0].PromptTokens == 0 || starts[0].Attempt != 1 {
		t.Fatalf("start notes %+v", starts)
	}
	if len(progress) < 2 || len(progress) > 5 {
		t.Fatalf("%d progress notes for a 1.5 s reply, want the first token and about one a second: %+v", len(progress), progress)
	}
	var text strings.Builder
	for i, p := range progress {
		text.WriteString(p.Text)
		if i > 0 && (p.Tokens <= progress[i-1].Tokens || p.TokensPerSecond <= 0) {
			t.Errorf("progress note %d: %d tokens at %.1f tok/s after %d", i, p.Tokens, p.TokensPerSecond, progress[i-1].Tokens)
		}
	}
	if text.String() != content {
		t.Errorf("the notes' text %q is not the reply", text.String())
	}
	if last := progress[len(progress)-1]; last.Tokens != 60 {
		t.Errorf("last note counts %d tokens, want 60", last.Tokens)
	}
}

// A retry and a re-ask are heard when they happen: before the request
// they lead to is sent, not after the whole call has ended.
func TestRetriesAndReasksAreHeardWhenTheyHappen(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	var got notes
	calls := 0
	srv.Script(llmtest.Step{Times: -1, Respond: func(c llmtest.Call) llmtest.Reply {
		calls++
		got.mark("request")
		switch calls {
		case 1:
			return llmtest.Reply{Status: 503, Body: `{"error":"busy"}`}
		case 2:
			return llmtest.Reply{Content: `{"answer": "cut`, DoneReason: "length", CompletionTokens: 30}
		}
		return llmtest.Reply{Content: `{"answer":"whole"}`}
	}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}, Retry: RetryPolicy{MaxAttempts: 2}})
	ctx := WithObserver(context.Background(), got.observe)
	type answer struct {
		Answer string `json:"answer"`
	}
	out, _, err := Structured[answer](ctx, r, Request{Role: "primary", Label: "qa", Messages: userMsg("hi")})
	if err != nil || out.Answer != "whole" {
		t.Fatalf("out %+v err %v", out, err)
	}
	var order []string
	for _, k := range got.log {
		if k == "request" || k == NoteRetry || k == NoteReask {
			order = append(order, k)
		}
	}
	want := []string{"request", NoteRetry, "request", NoteReask, "request"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("order %v, want %v", order, want)
	}
	retry, reask := got.kinds(NoteRetry)[0], got.kinds(NoteReask)[0]
	if retry.Attempt != 2 || retry.Label != "qa" || !strings.Contains(retry.Err, "busy") {
		t.Errorf("retry note %+v", retry)
	}
	if reask.Stop != StopLength || reask.Tokens != 30 || reask.Label != "qa" {
		t.Errorf("reask note %+v", reask)
	}
}

// Without an observer nothing is measured beyond the count the stall timer
// needs: a call costs what it cost before.
func BenchmarkStreamingWithAndWithoutAnObserver(b *testing.B) {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: strings.Repeat("tok ", 200)}})
	r, err := NewRouter(RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"without", context.Background()},
		{"with", WithObserver(context.Background(), func(context.Context, Note) {})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Chat(tc.ctx, Request{Role: "primary", Messages: userMsg("hi")}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(1, "calls/op")
		})
	}
}
