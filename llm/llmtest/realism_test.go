package llmtest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends a raw /api/chat body and returns the status and the body.
func post(t *testing.T, s *Server, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// The refusals below are worded as a real Ollama v0.11.4 server words them
// (docs/testing-real-ollama.md), and checked in its order; the 404 is
// v0.17.4's wording, as llmtest's default version.
func TestRefusalsAsTheRealServer(t *testing.T) {
	s := NewServer(WithModels(
		ModelInfo{Name: "tiny", ContextLength: 4096},
		ModelInfo{Name: "plain", Capabilities: []string{"completion"}},
		ModelInfo{Name: "emb", Capabilities: []string{"embedding"}},
	))
	defer s.Close()
	s.SetDefault(func(Call) Reply { return Reply{Content: "ok"} })
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ name, body, want string }{
		{"a wrongly typed option is a 500", `{"model":"tiny","stream":false,` + msgs + `,"options":{"top_k":"high"}}`,
			`500 {"error":"option \"top_k\" must be of type integer"}`},
		{"a float option given a string", `{"model":"tiny","stream":false,` + msgs + `,"options":{"temperature":"hot"}}`,
			`500 {"error":"option \"temperature\" must be of type float32"}`},
		{"stop must be a list", `{"model":"tiny","stream":false,` + msgs + `,"options":{"stop":"x"}}`,
			`500 {"error":"option \"stop\" must be of type array"}`},
		{"unknown options are accepted", `{"model":"tiny","stream":false,` + msgs + `,"options":{"bogus":1}}`, `200`},
		{"the model is checked before the options", `{"model":"nope","stream":false,` + msgs + `,"options":{"top_k":"high"}}`,
			`404 {"error":"model 'nope' not found"}`},
		{"a bad format is a 500", `{"model":"tiny","stream":false,` + msgs + `,"format":"yaml"}`,
			`500 {"error":"invalid format: \"\\\"yaml\\\"\"; expected \"json\" or a valid JSON Schema object"}`},
		{"streaming, a bad format is an error line in a 200 stream", `{"model":"tiny",` + msgs + `,"format":[1,2]}`,
			`200 {"error":"invalid format: \"[1,2]\"; expected \"json\" or a valid JSON Schema object"}`},
		{"format json is fine", `{"model":"tiny","stream":false,` + msgs + `,"format":"json"}`, `200`},
		{"an embedding model does not chat", `{"model":"emb","stream":false,` + msgs + `}`,
			`400 {"error":"\"emb\" does not support chat"}`},
		{"tools name the model in full", `{"model":"plain","stream":false,` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}]}`,
			`400 {"error":"registry.ollama.ai/library/plain:latest does not support tools"}`},
	} {
		status, body := post(t, s, c.body)
		got := fmt.Sprintf("%d %s", status, body)
		if c.want == "200" {
			got = fmt.Sprint(status)
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// The real server cuts a prompt longer than its window without a word: it
// answers 200 and counts one whole window of prompt.
func TestPromptCutToTheWindowSilently(t *testing.T) {
	s := NewServer(WithModels(ModelInfo{Name: "tiny", ContextLength: 4096}))
	defer s.Close()
	s.SetDefault(func(Call) Reply { return Reply{Content: "ok", PromptTokens: 5000} })
	for _, c := range []struct {
		options string
		want    string
	}{
		{`{"num_ctx":2048}`, `"prompt_eval_count":2048`},
		{`{"num_ctx":100000}`, `"prompt_eval_count":4096`}, // clamped to the model's length
		{`{}`, `"prompt_eval_count":4096`},                 // the server's default window
		{`{"num_ctx":8192}`, `"prompt_eval_count":4096`},
	} {
		for _, stream := range []string{"true", "false"} {
			status, body := post(t, s, `{"model":"tiny","stream":`+stream+`,"messages":[{"role":"user","content":"hi"}],"options":`+c.options+`}`)
			if status != 200 || !strings.Contains(body, c.want) {
				t.Errorf("options %s stream %s: %d %s", c.options, stream, status, body)
			}
		}
	}
}
