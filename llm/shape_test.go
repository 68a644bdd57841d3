package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// The scripted server must answer in the real wire formats: the same keys as
// the recordings, NDJSON lines, SSE data: events ending in [DONE], the final
// usage chunk with OpenRouter's cost.

func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sub(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func sameKeys(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := keys(got), keys(want); !slices.Equal(g, w) {
		t.Errorf("%s: keys %v, recorded %v", what, g, w)
	}
}

// subset checks every key of got appears in one of the recordings, and the
// required keys are present.
func subset(t *testing.T, what string, got any, required []string, recorded ...any) {
	t.Helper()
	allowed := map[string]bool{}
	for _, r := range recorded {
		for _, k := range keys(r) {
			allowed[k] = true
		}
	}
	gk := keys(got)
	for _, k := range gk {
		if !allowed[k] {
			t.Errorf("%s: key %q appears in no recording", what, k)
		}
	}
	for _, k := range required {
		if !slices.Contains(gk, k) {
			t.Errorf("%s: key %q missing (have %v)", what, k, gk)
		}
	}
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func ndjsonLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Errorf("NDJSON body does not end with a newline")
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func readNDJSONCassette(t *testing.T, name string) []map[string]any {
	b, err := os.ReadFile(filepath.Join("testdata", "cassettes", name))
	if err != nil {
		t.Fatal(err)
	}
	return ndjsonLines(t, b)
}

func TestScriptedOllamaShapesMatchRecordings(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "m"}))
	defer srv.Close()
	srv.Script(
		llmtest.Step{Contains: "stream", Reply: llmtest.Reply{Content: "Okay, here we go"}},
		llmtest.Step{Contains: "whole", Reply: llmtest.Reply{Content: `{"age": 22}`}},
		llmtest.Step{Contains: "tools", Reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)}}}},
	)

	resp, body := post(t, srv.URL()+"/api/chat", `{"model":"m","messages":[{"role":"user","content":"stream"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("stream content type %q", ct)
	}
	got := ndjsonLines(t, body)
	rec := readNDJSONCassette(t, "ollama/chat_stream_plain.ndjson")
	if len(got) < 2 {
		t.Fatalf("%d lines", len(got))
	}
	sameKeys(t, "stream chunk", got[0], rec[0])
	sameKeys(t, "stream chunk message", got[0]["message"], rec[0]["message"])
	sameKeys(t, "final line", got[len(got)-1], rec[len(rec)-1])

	resp, body = post(t, srv.URL()+"/api/chat", `{"model":"m","stream":false,"messages":[{"role":"user","content":"whole"}]}`)
	var whole map[string]any
	if err := json.Unmarshal(body, &whole); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("non-stream content type %q", resp.Header.Get("Content-Type"))
	}
	sameKeys(t, "non-stream reply", whole, readCassette(t, "ollama/doc_chat_nonstream_format_schema.json"))

	_, body = post(t, srv.URL()+"/api/chat", `{"model":"m","messages":[{"role":"user","content":"tools"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`)
	got = ndjsonLines(t, body)
	rec = readNDJSONCassette(t, "ollama/doc_chat_stream_tools.ndjson")
	sameKeys(t, "tool chunk message", got[0]["message"], rec[0]["message"])
	// v0.17.4 adds id and index to what its docs show.
	subset(t, "tool call", sub(got[0], "message", "tool_calls", 0), []string{"function"}, sub(rec[0], "message", "tool_calls", 0), map[string]any{"id": 1})
	subset(t, "tool call function", sub(got[0], "message", "tool_calls", 0, "function"), []string{"name", "arguments"},
		sub(rec[0], "message", "tool_calls", 0, "function"), map[string]any{"index": 1})

	_, body = post(t, srv.URL()+"/api/embed", `{"model":"m","input":["Hello world"]}`)
	var emb map[string]any
	_ = json.Unmarshal(body, &emb)
	sameKeys(t, "embed", emb, readCassette(t, "ollama/embed.json"))

	_, body = post(t, srv.URL()+"/api/chat", `{"model":"nope","messages":[]}`)
	var nf map[string]any
	_ = json.Unmarshal(body, &nf)
	if nf["error"] != readCassette(t, "ollama/real_error_model_not_found.json")["error"] {
		t.Errorf("404 body %v", nf)
	}
	_, body = post(t, srv.URL()+"/api/embed", `{"model":"nomic-embed-text","input":"x"}`)
	_ = json.Unmarshal(body, &nf)
	if nf["error"] != readCassette(t, "ollama/real_error_embed_model_not_found.json")["error"] {
		t.Errorf("embed 404 body %v", nf)
	}

	for _, c := range []struct{ path, cassette string }{{"/api/version", "ollama/real_version.json"}, {"/api/tags", "ollama/real_tags.json"}} {
		r, err := http.Get(srv.URL() + c.path)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		_ = json.NewDecoder(r.Body).Decode(&v)
		r.Body.Close()
		sameKeys(t, c.path, v, readCassette(t, c.cassette))
	}
}

func TestScriptedOpenAIShapesMatchRecordings(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithProcessingComments())
	defer srv.Close()
	srv.Script(
		llmtest.Step{Contains: "whole", Reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "divide", Arguments: json.RawMessage(`{"a":1}`)}}, Cost: 0.25}},
		llmtest.Step{Contains: "stream", Reply: llmtest.Reply{Content: "O K", Cost: 0.5}},
		llmtest.Step{Contains: "broken", Reply: llmtest.Reply{Content: "partial", MidStreamError: "Provider disconnected unexpectedly"}},
		llmtest.Step{Contains: "denied", Reply: llmtest.Reply{Status: 401, Content: "No auth credentials found"}},
	)
	base := srv.URL() + "/api/v1/chat/completions"
	recTools := readCassette(t, "openai/chat_tool_calls_usage.json")
	recOR := readCassette(t, "openrouter/chat_nonstream_usage_cost.json")

	_, body := post(t, base, `{"model":"m","messages":[{"role":"user","content":"whole"}]}`)
	var whole map[string]any
	if err := json.Unmarshal(body, &whole); err != nil {
		t.Fatal(err)
	}
	subset(t, "completion", whole, []string{"id", "object", "created", "model", "choices", "usage"}, recTools, recOR)
	subset(t, "choice", sub(whole, "choices", 0), []string{"index", "message", "finish_reason"}, sub(recTools, "choices", 0), sub(recOR, "choices", 0))
	subset(t, "message", sub(whole, "choices", 0, "message"), []string{"role", "content", "tool_calls"}, sub(recTools, "choices", 0, "message"), sub(recOR, "choices", 0, "message"))
	sameKeys(t, "tool call", sub(whole, "choices", 0, "message", "tool_calls", 0), sub(recTools, "choices", 0, "message", "tool_calls", 0))
	subset(t, "usage", sub(whole, "usage"), []string{"prompt_tokens", "completion_tokens", "total_tokens", "cost"}, sub(recOR, "usage"))
	if sub(whole, "usage", "cost") != 0.25 {
		t.Errorf("cost %v", sub(whole, "usage", "cost"))
	}

	resp, body := post(t, base, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"stream"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream content type %q", ct)
	}
	recSSE, err := os.ReadFile(filepath.Join("testdata", "cassettes", "openrouter/chat_stream_usage_cost.sse"))
	if err != nil {
		t.Fatal(err)
	}
	got, rec := sseEvents(t, body), sseEvents(t, recSSE)
	if got[0] != ": OPENROUTER PROCESSING" || got[len(got)-1] != "data: [DONE]" {
		t.Errorf("stream frame: first %q last %q", got[0], got[len(got)-1])
	}
	gotChunks, recChunks := sseChunks(t, got), sseChunks(t, rec)
	sameKeys(t, "chunk", gotChunks[0], recChunks[0])
	sameKeys(t, "chunk choice", sub(gotChunks[0], "choices", 0), sub(recChunks[0], "choices", 0))
	lastGot, lastRec := gotChunks[len(gotChunks)-1], recChunks[len(recChunks)-1]
	subset(t, "usage chunk", lastGot, []string{"usage", "choices"}, lastRec)
	subset(t, "usage chunk usage", sub(lastGot, "usage"), []string{"prompt_tokens", "completion_tokens", "total_tokens", "cost"}, sub(lastRec, "usage"))
	if sub(lastGot, "usage", "cost") != 0.5 {
		t.Errorf("final usage chunk cost %v", sub(lastGot, "usage", "cost"))
	}

	_, body = post(t, base, `{"model":"m","stream":true,"messages":[{"role":"user","content":"broken"}]}`)
	recErr, _ := os.ReadFile(filepath.Join("testdata", "cassettes", "openrouter/doc_midstream_error.sse"))
	gotErr, wantErr := sseChunks(t, sseEvents(t, body)), sseChunks(t, sseEvents(t, recErr))
	errChunk := gotErr[len(gotErr)-1]
	sameKeys(t, "mid-stream error chunk", errChunk, wantErr[0])
	sameKeys(t, "mid-stream error", errChunk["error"], wantErr[0]["error"])
	if sub(errChunk, "choices", 0, "finish_reason") != "error" {
		t.Errorf("finish_reason %v", sub(errChunk, "choices", 0, "finish_reason"))
	}

	resp, body = post(t, base, `{"model":"m","messages":[{"role":"user","content":"denied"}]}`)
	var e map[string]any
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != 401 {
		t.Errorf("status %d", resp.StatusCode)
	}
	rec401 := readCassette(t, "openrouter/error_401_no_auth.json")
	sameKeys(t, "error envelope", e, rec401)
	sameKeys(t, "error", e["error"], rec401["error"])
	if sub(e, "error", "code") != float64(401) {
		t.Errorf("error code %v", sub(e, "error", "code"))
	}
}

// sseEvents splits an SSE body into its events (one line each here), checking
// the blank-line framing.
func sseEvents(t *testing.T, b []byte) []string {
	t.Helper()
	s := string(b)
	if !strings.HasSuffix(s, "\n\n") {
		t.Errorf("SSE body does not end with a blank line")
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if strings.Contains(ev, "\n") {
			t.Errorf("multi-line event %q", ev)
		}
		if !strings.HasPrefix(ev, "data: ") && !strings.HasPrefix(ev, ": ") {
			t.Errorf("event %q is neither data nor comment", ev)
		}
		out = append(out, ev)
	}
	return out
}

func sseChunks(t *testing.T, events []string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, m)
	}
	return out
}
