package realollama_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/internal/tinymodel"
)

// replySchema is bounded (maxLength, enum, maximum) so grammar-constrained output from
// random weights ends well within the reply budget.
const replySchema = `{
  "type": "object",
  "properties": {
    "verdict": {"type": "string", "enum": ["pass", "fail"]},
    "reason": {"type": "string", "maxLength": 12},
    "score": {"type": "integer", "minimum": 0, "maximum": 9}
  },
  "required": ["verdict", "reason", "score"],
  "additionalProperties": false
}`

func compileSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("reply.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("reply.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, content string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
	if err != nil {
		t.Fatalf("reply is not JSON (%v): %q", err, content)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("reply does not match the schema: %v\n%q", err, content)
	}
}

func TestRealOllamaSmoke(t *testing.T) {
	s := realollama.Start(t)
	c := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	schema := compileSchema(t, replySchema)
	noStream := false

	t.Run("version is the release make ollama builds", func(t *testing.T) {
		v, err := c.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv(realollama.EnvBin) != "" {
			t.Logf("custom binary reports version %s", v)
			return
		}
		if v != realollama.Version || s.Version != v {
			t.Fatalf("version %q (Start saw %q), want %q", v, s.Version, realollama.Version)
		}
	})

	t.Run("tags list the three models with a latest tag", func(t *testing.T) {
		list, err := c.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range list.Models {
			names = append(names, m.Name)
			if m.Details.Family != "llama" || m.Details.QuantizationLevel != "F16" {
				t.Errorf("%s: details %+v", m.Name, m.Details)
			}
		}
		slices.Sort(names)
		want := []string{s.Models.Chat + ":latest", s.Models.Embed + ":latest", s.Models.ChatNoTools + ":latest"}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("tags %q, want %q", names, want)
		}
	})

	t.Run("show gives context length and capabilities", func(t *testing.T) {
		for _, tc := range []struct {
			model string
			caps  []string
		}{
			{s.Models.Chat, []string{"completion", "tools"}},
			{s.Models.ChatNoTools, []string{"completion"}},
			{s.Models.Embed, []string{"embedding"}},
		} {
			show, err := c.Show(ctx, &api.ShowRequest{Model: tc.model})
			if err != nil {
				t.Fatalf("%s: %v", tc.model, err)
			}
			var caps []string
			for _, c := range show.Capabilities {
				caps = append(caps, string(c))
			}
			if !slices.Equal(caps, tc.caps) {
				t.Errorf("%s: capabilities %q, want %q", tc.model, caps, tc.caps)
			}
			// The Modelfile's parameters reach the server: one runner thread for every model.
			if params := strings.Fields(show.Parameters); !slices.Contains(params, "num_thread") {
				t.Errorf("%s: parameters %q lack num_thread", tc.model, show.Parameters)
			}
			ctxLen, ok := show.ModelInfo["llama.context_length"].(float64)
			if !ok || int(ctxLen) != tinymodel.DefaultConfig(1).ContextLength {
				t.Errorf("%s: llama.context_length = %v", tc.model, show.ModelInfo["llama.context_length"])
			}
		}
	})

	chatReq := func(stream bool) *api.ChatRequest {
		return &api.ChatRequest{
			Model:    s.Models.Chat,
			Messages: []api.Message{{Role: "system", Content: "Judge the change."}, {Role: "user", Content: "Did the tests pass?"}},
			Format:   json.RawMessage(replySchema),
			Stream:   &stream,
			Options:  map[string]any{"seed": 7, "num_predict": 400},
		}
	}

	t.Run("chat with a schema answers schema-valid JSON", func(t *testing.T) {
		var got []api.ChatResponse
		if err := c.Chat(ctx, chatReq(false), func(r api.ChatResponse) error { got = append(got, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("non-streaming chat gave %d objects", len(got))
		}
		r := got[0]
		if !r.Done || r.DoneReason != "stop" || r.PromptEvalCount == 0 || r.EvalCount == 0 {
			t.Fatalf("done=%v reason=%q prompt=%d eval=%d", r.Done, r.DoneReason, r.PromptEvalCount, r.EvalCount)
		}
		validate(t, schema, r.Message.Content)
	})

	t.Run("streamed chat with a schema ends with done and valid JSON", func(t *testing.T) {
		var content strings.Builder
		var chunks int
		var last api.ChatResponse
		if err := c.Chat(ctx, chatReq(true), func(r api.ChatResponse) error {
			chunks++
			content.WriteString(r.Message.Content)
			last = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if chunks < 3 || !last.Done || last.DoneReason != "stop" {
			t.Fatalf("%d chunks, last done=%v reason=%q", chunks, last.Done, last.DoneReason)
		}
		validate(t, schema, content.String())
	})

	t.Run("tools reach the template of the tools model only", func(t *testing.T) {
		var tools api.Tools
		if err := json.Unmarshal([]byte(`[{"type": "function", "function": {"name": "read_file",
			"description": "Read a file of the repository.", "parameters": {"type": "object",
			"properties": {"path": {"type": "string"}}, "required": ["path"]}}}]`), &tools); err != nil {
			t.Fatal(err)
		}
		promptTokens := func(model string, tools api.Tools) (int, error) {
			var r api.ChatResponse
			err := c.Chat(ctx, &api.ChatRequest{
				Model: model, Messages: []api.Message{{Role: "user", Content: "Read main.go"}}, Tools: tools,
				Stream: &noStream, Options: map[string]any{"seed": 1, "num_predict": 4},
			}, func(x api.ChatResponse) error { r = x; return nil })
			return r.PromptEvalCount, err
		}
		without, err := promptTokens(s.Models.Chat, nil)
		if err != nil {
			t.Fatal(err)
		}
		with, err := promptTokens(s.Models.Chat, tools)
		if err != nil {
			t.Fatal(err)
		}
		if with <= without+10 {
			t.Errorf("prompt tokens with tools %d, without %d: the tool list is not rendered", with, without)
		}
		_, err = promptTokens(s.Models.ChatNoTools, tools)
		var se api.StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest || !strings.Contains(se.ErrorMessage, "does not support tools") {
			t.Fatalf("tools to the no-tools model: %v, want 400 does not support tools", err)
		}
	})

	t.Run("embed returns one unit vector per input", func(t *testing.T) {
		inputs := []string{"plan the work", "run the tests", "plan the work"}
		r, err := c.Embed(ctx, &api.EmbedRequest{Model: s.Models.Embed, Input: inputs})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Embeddings) != len(inputs) {
			t.Fatalf("%d vectors for %d inputs", len(r.Embeddings), len(inputs))
		}
		for i, v := range r.Embeddings {
			if len(v) != tinymodel.DefaultConfig(1).EmbeddingLength {
				t.Fatalf("vector %d has %d dimensions", i, len(v))
			}
			var norm float64
			for _, x := range v {
				norm += float64(x) * float64(x)
			}
			if math.Abs(math.Sqrt(norm)-1) > 1e-3 {
				t.Errorf("vector %d has norm %v", i, math.Sqrt(norm))
			}
		}
		same := func(a, b []float32) bool {
			x, _ := json.Marshal(a)
			y, _ := json.Marshal(b)
			return bytes.Equal(x, y)
		}
		if !same(r.Embeddings[0], r.Embeddings[2]) || same(r.Embeddings[0], r.Embeddings[1]) {
			t.Errorf("equal texts should embed equally and different texts differently")
		}
	})
}
