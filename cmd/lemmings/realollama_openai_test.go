package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// wireRecorder is a loopback reverse proxy that keeps the body of every
// request it forwards: what lemmings really sent to the server.
type wireRecorder struct {
	mu     sync.Mutex
	bodies map[string][][]byte // path → request bodies
}

func recordWire(t *testing.T, target string) (*httptest.Server, *wireRecorder) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &wireRecorder{bodies: map[string][][]byte{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.bodies[r.URL.Path] = append(rec.bodies[r.URL.Path], body)
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func (r *wireRecorder) get(path string) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[path]
}

// The supervisors on an OpenAI-compatible endpoint — the real Ollama
// server's /v1, the way a user points a role at Ollama, LM Studio or vLLM —
// with the suite's random-weight model, named without its tag as users do
// (the server lists "tiny-chat:latest"). The check at start accepts the
// name; every supervisor call sends its schema as response_format; each
// reply is validated and lands as a result or, malformed, is discarded with
// a warning; the run goes on to its report.
func TestRealOllamaSupervisorsOnTheOpenAICompatibleEndpoint(t *testing.T) {
	s := realollama.Start(t)
	supervisorsOnV1(t, s, s.Models.Chat)
}

// supervisorsOnV1 runs lemmings with the supervisors on the server's /v1
// (through a recording proxy) as model supervisorModel, the other roles on
// its Ollama API with the random-weight chat model.
func supervisorsOnV1(t *testing.T, s *realollama.Server, supervisorModel string) {
	t.Helper()
	proxy, wire := recordWire(t, s.URL)
	dir := demoRepo(t)
	c := newCLI(t, "OLLAMA_HOST="+s.Host)
	c.config(`roles:
  primary:
    options: {seed: 7}
  summarizer:
    model: ` + s.Models.Chat + `
    options: {seed: 7}
  supervisor:
    provider: openai
    base_url: ` + proxy.URL + `/v1
    model: ` + supervisorModel + `
    max_tokens: 400
    timeout: 2m
supervisors:
  mode: blocking
  input_tokens: 1500
limits:
  max_actions: 2
  max_retries: 1
  max_tasks: 3
  max_consecutive_failures: 2
  token_budgets: {scope_agent: 2000, task_planner: 2000, implementor: 1500, qa: 2000, assessor: 2000, summarizer: 1000, supervisor: 2000}
`)
	r := c.run(dir, "--json", "run", "--model", s.Models.Chat, "--embed-model", s.Models.Embed, "add a Multiply function with a test")
	out := r.stdout + r.stderr
	if strings.Contains(out, "supervisors off") || strings.Contains(out, "model_not_found") {
		t.Fatalf("the supervisors were turned off:\n%s", out)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	var result map[string]any
	for _, l := range jsonLines(t, r.stdout) {
		if l["kind"] == "result" {
			result = l
		}
	}
	if result == nil || (r.code != exitOK && r.code != exitFailed) {
		t.Fatalf("exit %d, result %v\n%s", r.code, result, out)
	}
	if _, err := os.Stat(fmt.Sprint(result["report"])); err != nil {
		t.Errorf("no report: %v", err)
	}

	// The wire: every chat call on /v1 is a supervisor's, with its schema.
	calls := wire.get("/v1/chat/completions")
	if len(calls) == 0 {
		t.Fatalf("no supervisor call reached /v1/chat/completions (paths: %v)\n%s", wire.paths(), out)
	}
	for i, body := range calls {
		var req struct {
			Model          string `json:"model"`
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Schema map[string]any `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if req.Model != supervisorModel || req.ResponseFormat.Type != "json_schema" || req.ResponseFormat.JSONSchema.Schema["type"] != "object" {
			t.Errorf("call %d sent model %q, response_format %+v", i, req.Model, req.ResponseFormat)
		}
	}

	// Every supervisor job landed: validated (supervisor_done) or discarded
	// with a warning — never skipped for a transport or protocol fault.
	id := fmt.Sprint(result["run_id"])
	events, err := os.ReadFile(filepath.Join(dir, ".lemmings", "runs", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	started, done, discarded := 0, 0, 0
	var reasons []string
	for _, ev := range jsonLines(t, string(events)) {
		data, _ := ev["data"].(map[string]any)
		switch ev["name"] {
		case "supervisor_start":
			started++
		case "supervisor_done":
			done++
		case "warning":
			msg := fmt.Sprint(data["message"])
			if strings.HasPrefix(msg, "supervisor ") && strings.Contains(msg, " discarded: ") {
				discarded++
				reasons = append(reasons, msg)
			}
			if strings.HasPrefix(msg, "supervisor ") && strings.Contains(msg, " skipped: ") {
				t.Errorf("a supervisor job failed outside the workflow's terms: %s", msg)
			}
		}
	}
	t.Logf("exit %d; %d supervisor jobs: %d validated, %d discarded; %d calls on /v1", r.code, started, done, discarded, len(calls))
	for _, why := range reasons[:min(2, len(reasons))] {
		t.Logf("  %.300s", why)
	}
	if started == 0 || done+discarded != started {
		t.Errorf("%d supervisor jobs started, %d validated, %d discarded\n%s", started, done, discarded, events)
	}
	prompts, err := os.ReadFile(filepath.Join(dir, ".lemmings", "runs", id, "prompts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	supervisorLines := 0
	for _, p := range jsonLines(t, string(prompts)) {
		if p["role"] == "supervisor" {
			supervisorLines++
			if p["provider"] != "openai" || p["structured"] != true {
				t.Errorf("supervisor call logged as %v, structured %v", p["provider"], p["structured"])
			}
		}
	}
	if supervisorLines != len(calls) {
		t.Errorf("%d supervisor calls logged, %d on the wire", supervisorLines, len(calls))
	}
}

func (r *wireRecorder) paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for p := range r.bodies {
		out = append(out, p)
	}
	return out
}
