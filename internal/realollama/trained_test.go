package realollama_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

func TestParseCacheSlots(t *testing.T) {
	log := `time=2026-11-24T05:54:46.940Z level=DEBUG source=server.go:736 msg="completion request" images=0 prompt=104 format=""
time=2026-11-24T05:54:46.941Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=0 prompt=21 used=0 remaining=21
time=2026-11-24T05:54:51.767Z level=DEBUG source=cache.go:136 msg="loading cache slot" id=0 cache=0 prompt=13 used=0 remaining=13
time=2026-11-24T05:56:19.594Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=40 prompt=1759 used=1756 remaining=3
time=2026-11-24T05:56:19.594Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 prompt=x used=1 remaining=2
`
	got := realollama.ParseCacheSlots(log)
	want := []realollama.CacheSlot{{21, 0, 21}, {13, 0, 13}, {1759, 1756, 3}}
	if len(got) != len(want) {
		t.Fatalf("slots %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("slot %d: %v, want %v", i, got[i], want[i])
		}
	}
	sum := realollama.SumCacheSlots(got)
	if sum.Requests != 3 || sum.Prompt != 1793 || sum.Used != 1756 || sum.Remaining != 37 {
		t.Errorf("sum %+v", sum)
	}
	if s := sum.Share(); math.Abs(s-1756.0/1793) > 1e-9 {
		t.Errorf("share %v", s)
	}
	if (realollama.CacheShare{}).Share() != 0 {
		t.Error("empty share is not 0")
	}
}

// TestRealTrainedModels pins what the trained models are on the server the suite builds
// (docs/testing-real-models.md): the facts the other trained-model tests rely on.
func TestRealTrainedModels(t *testing.T) {
	s := realollama.Start(t, realollama.WithTrainedModels(), realollama.WithEnv("OLLAMA_DEBUG", "1"))
	c := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	m := s.Trained
	noStream := false

	t.Run("smollm2 chats in ChatML, the template the server read from its GGUF", func(t *testing.T) {
		show, err := c.Show(ctx, &api.ShowRequest{Model: m.Chat})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(show.Template, "<|im_start|>") || show.ModelInfo["general.architecture"] != "llama" {
			t.Errorf("template %q, architecture %v", show.Template, show.ModelInfo["general.architecture"])
		}
		var reply api.ChatResponse
		err = c.Chat(ctx, &api.ChatRequest{Model: m.Chat, Stream: &noStream,
			Messages: []api.Message{{Role: "system", Content: "Answer with one word."}, {Role: "user", Content: "What is the capital of France?"}},
			Options:  map[string]any{"seed": 1, "temperature": 0, "num_predict": 16}},
			func(r api.ChatResponse) error { reply = r; return nil })
		if err != nil {
			t.Fatal(err)
		}
		// A trained model, not noise: the answer is known to every model worth the name.
		if !strings.Contains(reply.Message.Content, "Paris") || !reply.Done {
			t.Errorf("reply %+v", reply)
		}
	})

	t.Run("smollm2 takes no tools: its template has no .Tools", func(t *testing.T) {
		show, err := c.Show(ctx, &api.ShowRequest{Model: m.Chat})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(capabilities(show), ","), "tools") {
			t.Errorf("capabilities %v", show.Capabilities)
		}
		err = c.Chat(ctx, &api.ChatRequest{Model: m.Chat, Stream: &noStream,
			Messages: []api.Message{{Role: "user", Content: "hi"}},
			Tools:    api.Tools{{Type: "function", Function: api.ToolFunction{Name: "read_file", Description: "read a file"}}}},
			func(api.ChatResponse) error { return nil })
		var se api.StatusError
		if !errors.As(err, &se) || se.StatusCode != 400 || !strings.Contains(se.ErrorMessage, "does not support tools") {
			t.Errorf("tools: %v", err)
		}
	})

	t.Run("gemma3-270m loads: the base model, completing text", func(t *testing.T) {
		show, err := c.Show(ctx, &api.ShowRequest{Model: m.Gemma})
		if err != nil {
			t.Fatal(err)
		}
		if show.ModelInfo["general.architecture"] != "gemma3" || show.ModelInfo["general.finetune"] != nil {
			t.Errorf("architecture %v, finetune %v", show.ModelInfo["general.architecture"], show.ModelInfo["general.finetune"])
		}
		var reply api.GenerateResponse
		err = c.Generate(ctx, &api.GenerateRequest{Model: m.Gemma, Raw: true, Stream: &noStream,
			Prompt:  "Paris is the capital and largest city of",
			Options: map[string]any{"seed": 1, "temperature": 0, "num_predict": 8}},
			func(r api.GenerateResponse) error { reply = r; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(reply.Response, "France") {
			t.Errorf("reply %q", reply.Response)
		}
	})

	t.Run("minilm is converted from safetensors and embeds in 384 dimensions", func(t *testing.T) {
		show, err := c.Show(ctx, &api.ShowRequest{Model: m.Embed})
		if err != nil {
			t.Fatal(err)
		}
		if show.ModelInfo["general.architecture"] != "bert" || !strings.Contains(strings.Join(capabilities(show), ","), "embedding") {
			t.Errorf("architecture %v, capabilities %v", show.ModelInfo["general.architecture"], show.Capabilities)
		}
		r, err := c.Embed(ctx, &api.EmbedRequest{Model: m.Embed, Input: []string{"a cat sits on the mat", "a kitten is sitting on a rug", "interest rates rose again"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Embeddings) != 3 || len(r.Embeddings[0]) != 384 {
			t.Fatalf("%d embeddings of %d", len(r.Embeddings), len(r.Embeddings[0]))
		}
		near, far := cosine(r.Embeddings[0], r.Embeddings[1]), cosine(r.Embeddings[0], r.Embeddings[2])
		if near < far+0.3 {
			t.Errorf("paraphrase %.3f, unrelated %.3f", near, far)
		}
	})

	t.Run("the debug log shows a repeated prompt served from the cache", func(t *testing.T) {
		msgs := []api.Message{{Role: "system", Content: strings.Repeat("You review Go code carefully. ", 20)}, {Role: "user", Content: "Say yes."}}
		ask := func() {
			err := c.Chat(ctx, &api.ChatRequest{Model: m.Chat, Stream: &noStream, Messages: msgs,
				Options: map[string]any{"seed": 1, "num_predict": 4}}, func(api.ChatResponse) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
		}
		ask()
		mark := s.LogMark()
		ask()
		got := s.CacheSince(mark)
		if got.Requests != 1 || got.Prompt < 100 || got.Used < got.Prompt-8 || got.Share() < 0.9 {
			t.Errorf("cache %+v", got)
		}
	})
}

func capabilities(show *api.ShowResponse) []string {
	var out []string
	for _, c := range show.Capabilities {
		out = append(out, string(c))
	}
	return out
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestFindTrainedModelsNamesTheMissingFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(realollama.EnvModelsDir, dir)
	_, err := realollama.FindTrainedModels()
	if !errors.Is(err, realollama.ErrNoTrainedModels) || !strings.Contains(err.Error(), dir+"/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") {
		t.Errorf("err %v", err)
	}
}
