package llm

import (
	"encoding/json"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// The scripted half of the Ollama contract (contract_test.go): llmtest set up
// as the real server with the tiny models.

// mimicServer is the scripted server set up as the real one under the
// contract: the same model names, capabilities and context length, the
// version make ollama builds, and replies from mimicTinyModel.
func mimicServer() *llmtest.Server {
	m := realollama.DefaultModels()
	srv := llmtest.NewServer(llmtest.WithVersion(realollama.Version), llmtest.WithModels(
		llmtest.ModelInfo{Name: m.Chat, ContextLength: 4096, Capabilities: []string{"completion", "tools"}},
		llmtest.ModelInfo{Name: m.ChatNoTools, ContextLength: 4096, Capabilities: []string{"completion"}},
		llmtest.ModelInfo{Name: m.Embed, ContextLength: 4096, Capabilities: []string{"embedding"}},
	))
	srv.SetDefault(mimicTinyModel)
	return srv
}

// mimicTinyModel answers as the tiny random-weight model does where the
// contract depends on it: its tokenizer (about a token per byte of text it
// never learnt, plus a few per message), grammar-constrained JSON when a
// schema is given, the seed-1 runaway that ends without done:true, and noise
// otherwise. What the server does with the reply (windows, truncation,
// streaming) is llmtest's own.
func mimicTinyModel(c llmtest.Call) llmtest.Reply {
	rep := llmtest.Reply{DoneReason: "stop"}
	for _, m := range c.Messages {
		rep.PromptTokens += len(m.Content) + 4
	}
	switch {
	case c.Temperature != nil && *c.Temperature == 0 && c.LastUser() == "hello 1":
		rep.Content, rep.NoDone = strings.Repeat(" of", 224), true
	case len(c.Format) > 0:
		var schema map[string]any
		_ = json.Unmarshal(c.Format, &schema)
		b, _ := json.Marshal(schemaInstance(schema))
		rep.Content = string(b)
	default:
		words := strings.Fields("k~ thehang ker every changet shahais of itests be}edT k~ an files")
		rep.Content = strings.Join(words[:min(len(words), max(c.MaxTokens, 1))], " ")
	}
	return rep
}

// schemaInstance is the least value a grammar-constrained model can write
// for a JSON schema: the first enum value, the minimum, required properties.
func schemaInstance(s map[string]any) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch s["type"] {
	case "object":
		props, _ := s["properties"].(map[string]any)
		out := map[string]any{}
		req, _ := s["required"].([]any)
		for _, name := range req {
			sub, _ := props[name.(string)].(map[string]any)
			out[name.(string)] = schemaInstance(sub)
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		out := []any{}
		for range jsonInt(s["minItems"]) {
			out = append(out, schemaInstance(items))
		}
		return out
	case "string":
		return strings.Repeat("x", max(jsonInt(s["minLength"]), min(2, jsonIntOr(s["maxLength"], 2))))
	case "integer", "number":
		return jsonInt(s["minimum"])
	case "boolean":
		return false
	}
	return nil
}

func jsonInt(v any) int { return jsonIntOr(v, 0) }

func jsonIntOr(v any, def int) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return def
}
