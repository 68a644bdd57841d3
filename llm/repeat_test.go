package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func TestALoopingReplyIsToldFromCode(t *testing.T) {
	para := "The project consists of two files: one for the original code and another file containing the remit.\n"
	for name, tc := range map[string]struct {
		text string
		want bool
	}{
		"one paragraph three times":       {strings.Repeat(para, 3), true},
		"a two-line block three times":    {"intro\n" + strings.Repeat("The remit contains the original code, and more.\nIt also includes a function.\n", 3), true},
		"twice is not yet a loop":         {strings.Repeat(para, 2), false},
		"short lines repeat in code":      {strings.Repeat("\t}\n", 6) + strings.Repeat("return nil\n", 5), false},
		"code with similar lines":         {"if a {\n\treturn fmt.Errorf(\"a: %w\", err)\n}\nif b {\n\treturn fmt.Errorf(\"b: %w\", err)\n}\nif c {\n\treturn fmt.Errorf(\"c: %w\", err)\n}\n", false},
		"a partial last line is not read": {strings.Repeat(para, 2) + strings.TrimSuffix(para, "\n"), false},
		"no newline":                      {"just text", false},
		"a loop after a code block":       {"```go\npackage x\n```\n" + strings.Repeat("This is the answer to the question that was asked.\n", 3), true},
		"table rows that differ":          {"\t{2015, false}, {1970, false}, {1996, true}, {1960, true},\n\t{2100, false}, {1900, false}, {2000, true}, {2400, true},\n\t{1800, false}, {1700, false}, {1600, true}, {1500, false},\n", false},
	} {
		if got := looping(tc.text); got != tc.want {
			t.Errorf("%s: looping = %v, want %v", name, got, tc.want)
		}
	}
}

// A looping reply is stopped while it streams: the client closes the stream
// after the third repeat instead of reading the model's whole budget, and
// says so in its own terms (KindRunaway, StopLooping, the cost kept).
func TestALoopingReplyIsStoppedWhileItStreams(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	line := "The project consists of two files: one for the code and one for the remit.\n"
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: "Sure.\n" + strings.Repeat(line, 200), ChunkDelay: time.Millisecond}},
		llmtest.Step{Reply: llmtest.Reply{Content: "```go\n" + strings.Repeat("\t}\n", 20) + "```\n", ChunkDelay: time.Millisecond}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	resp, err := r.Chat(context.Background(), Request{Role: "primary", Label: "implementor", Messages: userMsg("write the code")})
	if !Runaway(err) || resp.Stop() != StopLooping {
		t.Fatalf("err %v, stop %s", err, resp.Stop())
	}
	if n := strings.Count(resp.Content, line); n != repeatTimes {
		t.Errorf("%d repeats read before stopping, want %d", n, repeatTimes)
	}
	if resp.Usage.Calls != 1 || resp.Usage.CompletionTokens == 0 || resp.Usage.PromptTokens == 0 {
		t.Errorf("the stopped call's cost is lost: %+v", resp.Usage)
	}
	// Code with short repeated lines runs to its end.
	resp, err = r.Chat(context.Background(), Request{Role: "primary", Label: "implementor", Messages: userMsg("write the code")})
	if err != nil || strings.Count(resp.Content, "\t}\n") != 20 {
		t.Errorf("code was cut: err %v, %q", err, resp.Content)
	}
}

// A conversation expected to grow gets its window at its first call, so the
// model is not reloaded (and the prompt evaluated afresh) at its second.
func TestAnExpectedConversationGetsItsWindowAtOnce(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "m", ContextLength: 32768}))
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "ok"}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	for _, expect := range []int{0, 3000, 6000} {
		if _, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("hi"), MaxTokens: 256, Expect: expect}); err != nil {
			t.Fatal(err)
		}
	}
	calls := srv.ChatCalls()
	if len(calls) != 3 || calls[0].NumCtx != 2048 || calls[1].NumCtx != 4096 || calls[2].NumCtx != 8192 {
		t.Errorf("num_ctx %v, want 2048 alone, then 4096 and 8192 for the expected sizes", []int{calls[0].NumCtx, calls[1].NumCtx, calls[2].NumCtx})
	}
}
