package realollama_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// TestRealCoderModels pins what the coding models are on the test server
// (docs/testing-real-models.md): created with the Qwen template, rendered as the GGUF's own
// template renders, stopped at the end of the turn, and able to write a one-line function.
// OLLAMA_DEBUG=2 makes the server log each prompt as it was rendered.
func TestRealCoderModels(t *testing.T) {
	s := realollama.Start(t, realollama.WithCoderModels(), realollama.WithEnv("OLLAMA_DEBUG", "2"))
	c := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	noStream := false
	t.Logf("coding models created in %v", s.Timings.CreateCoder)

	t.Run("created with the Qwen template, its stops, and tools", func(t *testing.T) {
		for _, m := range []string{s.Coder.Qwen05, s.Coder.Qwen15} {
			show, err := c.Show(ctx, &api.ShowRequest{Model: m})
			if err != nil {
				t.Fatal(err)
			}
			if show.Template != realollama.QwenTemplate {
				t.Errorf("%s: template %q", m, show.Template)
			}
			for _, stop := range []string{`"<|im_end|>"`, `"<|endoftext|>"`} {
				if !strings.Contains(show.Parameters, stop) {
					t.Errorf("%s: parameters %q lack stop %s", m, show.Parameters, stop)
				}
			}
			if caps := capabilities(show); !slices.Contains(caps, "tools") || !slices.Contains(caps, "completion") {
				t.Errorf("%s: capabilities %v", m, caps)
			}
			if show.ModelInfo["general.architecture"] != "qwen2" {
				t.Errorf("%s: architecture %v", m, show.ModelInfo["general.architecture"])
			}
		}
		show, _ := c.Show(ctx, &api.ShowRequest{Model: s.Coder.Qwen15})
		if show == nil || show.ModelInfo["qwen2.block_count"] != float64(28) {
			t.Errorf("qwen15 is not the 1.5B model (28 layers): %v", show.ModelInfo)
		}
	})

	t.Run("without a TEMPLATE, v0.11.4 finds no template for the GGUF's Jinja one", func(t *testing.T) {
		path, err := realollama.FindCoderModel(s.Coder.Qwen05)
		if err != nil {
			t.Fatal(err)
		}
		digest := "" // the blob is in the store already: name it by the digest of the model just created
		show, err := c.Show(ctx, &api.ShowRequest{Model: s.Coder.Qwen05, Verbose: false})
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(show.Modelfile, "\n") {
			if rest, ok := strings.CutPrefix(line, "FROM "); ok && strings.Contains(rest, "sha256-") {
				digest = "sha256:" + rest[strings.LastIndex(rest, "sha256-")+len("sha256-"):]
			}
		}
		if digest == "" {
			t.Fatalf("no blob in the Modelfile %q", show.Modelfile)
		}
		err = c.Create(ctx, &api.CreateRequest{Model: "qwen05-as-is", Stream: &noStream,
			Files: map[string]string{"model.gguf": digest}}, func(api.ProgressResponse) error { return nil })
		if err != nil {
			t.Fatalf("create from %s: %v", path, err)
		}
		show, err = c.Show(ctx, &api.ShowRequest{Model: "qwen05-as-is"})
		if err != nil {
			t.Fatal(err)
		}
		if show.Template != "{{ .Prompt }}" {
			t.Errorf("the server found a template after all (%q): QwenTemplate may be unneeded", show.Template)
		}
	})

	t.Run("a conversation renders as the GGUF's Jinja template renders it", func(t *testing.T) {
		mark := len(s.Log())
		chat(ctx, t, c, s.Coder.Qwen05, []api.Message{
			{Role: "system", Content: "You write Go."},
			{Role: "user", Content: "Say hi."},
			{Role: "assistant", Content: "hi"},
			{Role: "user", Content: "Again."},
		}, nil, 2)
		want := "<|im_start|>system\nYou write Go.<|im_end|>\n<|im_start|>user\nSay hi.<|im_end|>\n" +
			"<|im_start|>assistant\nhi<|im_end|>\n<|im_start|>user\nAgain.<|im_end|>\n<|im_start|>assistant\n"
		if got := lastPrompt(t, s.Log()[mark:]); got != want {
			t.Errorf("rendered\n%q\nwant\n%q", got, want)
		}

		mark = len(s.Log())
		chat(ctx, t, c, s.Coder.Qwen05, []api.Message{{Role: "user", Content: "Say hi."}}, nil, 2)
		want = "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
			"<|im_start|>user\nSay hi.<|im_end|>\n<|im_start|>assistant\n"
		if got := lastPrompt(t, s.Log()[mark:]); got != want {
			t.Errorf("without a system message, rendered\n%q\nwant\n%q", got, want)
		}

		// A prefilled reply stays open: the model goes on from the fence.
		mark = len(s.Log())
		chat(ctx, t, c, s.Coder.Qwen05, []api.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"},
			{Role: "assistant", Content: "```go\n"}}, nil, 2)
		want = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n```go\n"
		if got := lastPrompt(t, s.Log()[mark:]); got != want {
			t.Errorf("prefilled, rendered\n%q\nwant\n%q", got, want)
		}

		mark = len(s.Log())
		tools := api.Tools{{Type: "function", Function: api.ToolFunction{Name: "read_file", Description: "Read a file"}}}
		chat(ctx, t, c, s.Coder.Qwen05, []api.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}}, tools, 2)
		got := lastPrompt(t, s.Log()[mark:])
		for _, part := range []string{
			"<|im_start|>system\nS\n\n# Tools\n\nYou may call one or more functions",
			`<tools>` + "\n" + `{"type":"function","function":{"name":"read_file","description":"Read a file"`,
			"</tool_call><|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n",
		} {
			if !strings.Contains(got, part) {
				t.Errorf("with tools, rendered\n%s\nlacks\n%s", got, part)
			}
		}
		if strings.Count(got, "<|im_start|>system") != 1 {
			t.Errorf("with tools, the system message is rendered twice:\n%s", got)
		}
	})

	t.Run("each model writes a one-line Go function and stops at the end of its turn", func(t *testing.T) {
		for _, m := range []string{s.Coder.Qwen05, s.Coder.Qwen15} {
			r := chat(ctx, t, c, m, []api.Message{
				{Role: "system", Content: "You are a Go programmer. Answer with code only."},
				{Role: "user", Content: "Write the Go function Add(a, b int) int that returns the sum of a and b."},
			}, nil, 256)
			t.Logf("%s: %q (%d prompt tokens at %.0f tok/s, %d generated at %.1f tok/s)", m, r.Message.Content,
				r.PromptEvalCount, float64(r.PromptEvalCount)/r.PromptEvalDuration.Seconds(),
				r.EvalCount, float64(r.EvalCount)/r.EvalDuration.Seconds())
			if !regexp.MustCompile(`func Add\(a, b int\) int \{\s*return a \+ b\s*\}`).MatchString(r.Message.Content) {
				t.Errorf("%s: reply %q", m, r.Message.Content)
			}
			if r.DoneReason != "stop" || strings.Contains(r.Message.Content, "<|im_") {
				t.Errorf("%s: done_reason %q: the reply did not end at <|im_end|>", m, r.DoneReason)
			}
		}
	})
}

func chat(ctx context.Context, t *testing.T, c *api.Client, model string, msgs []api.Message, tools api.Tools, predict int) api.ChatResponse {
	t.Helper()
	noStream := false
	var r api.ChatResponse
	err := c.Chat(ctx, &api.ChatRequest{Model: model, Stream: &noStream, Messages: msgs, Tools: tools,
		Options: map[string]any{"seed": 1, "temperature": 0, "num_predict": predict, "num_ctx": 2048}},
		func(x api.ChatResponse) error { r = x; return nil })
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	return r
}

var promptLine = regexp.MustCompile(`msg="completion request" prompt=("(?:[^"\\]|\\.)*")`)

// lastPrompt is the last prompt the server logged at trace level (OLLAMA_DEBUG=2).
func lastPrompt(t *testing.T, log string) string {
	t.Helper()
	m := promptLine.FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		t.Fatalf("no prompt in the server log:\n%s", log)
	}
	p, err := strconv.Unquote(m[len(m)-1][1])
	if err != nil {
		t.Fatalf("prompt %s: %v", m[len(m)-1][1], err)
	}
	return p
}
