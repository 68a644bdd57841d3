package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// The one step from the demo to your own repository (issue 46): a server with the model
// make local-model creates, and nothing else.
func qwen15Server(t *testing.T) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "qwen15", ContextLength: 32768}))
	srv.Script(llmtest.Step{Name: "any", API: llmtest.Ollama, Times: -1, Reply: llmtest.Reply{Content: demo.DoctorReply}})
	t.Cleanup(srv.Close)
	return srv
}

// doctorLines runs lemmings doctor --json and returns its lines by check name (the last of a
// name wins) with the whole output.
func doctorLines(t *testing.T, c *cli, repo string, args ...string) (map[string]map[string]any, string, int) {
	t.Helper()
	r := c.run(repo, append([]string{"--json", "doctor"}, args...)...)
	lines := map[string]map[string]any{}
	for _, l := range jsonLines(t, r.stdout) {
		lines[fmt.Sprint(l["check"])] = l
	}
	return lines, r.stdout + r.stderr, r.code
}

// What scripts/local-model.sh writes into the user file is all a repository needs: doctor
// --offline finds the model on the server for both local roles and asks no embedding model.
func TestLocalModelSetupIsWhatDoctorAndRunUse(t *testing.T) {
	srv := qwen15Server(t)
	c := newCLI(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "local-model.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "--configure-only")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+c.configHome, "LOCAL_CONFIG=", "MODEL=", "LOCAL_HOST="+srv.URL())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("local-model.sh --configure-only: %v\n%s", err, out)
	}
	lines, out, code := doctorLines(t, c, prepared(t), "--offline")
	if code != 0 {
		t.Errorf("doctor --offline: exit %d\n%s", code, out)
	}
	for _, role := range []string{"primary", "summarizer"} {
		if l := lines["model "+role]; l["status"] != "ok" || l["detail"] != "qwen15 on "+srv.URL() {
			t.Errorf("model %s: %v", role, l)
		}
	}
	if _, ok := lines["model embedding"]; ok || strings.Contains(out, "ollama pull") {
		t.Errorf("doctor asks for an embedding model or a pull:\n%s", out)
	}
	// A run in a repository of its own asks that server for that model.
	repo := prepared(t)
	r := c.run(repo, "run", "--offline", "--quick", "Fix MeanWordLength in textstats.go: it divides two ints.")
	var asked []string
	for _, call := range srv.ChatCalls() {
		if !strings.Contains(call.Prompt, "doctor") {
			asked = append(asked, call.Model)
		}
	}
	if len(asked) == 0 || strings.Join(asked, " ") != strings.TrimSpace(strings.Repeat("qwen15 ", len(asked))) {
		t.Errorf("the run asked %q (exit %d)\n%s", asked, r.code, r.stderr)
	}
}

// Without the setup, --model alone: the summarizer and embedding roles say what stands in for
// them, and no fix is a download.
func TestDoctorOfflineNamesWhatStandsInForAMissingModel(t *testing.T) {
	srv := qwen15Server(t)
	c := newCLI(t, "OLLAMA_HOST="+srv.URL())
	lines, out, code := doctorLines(t, c, prepared(t), "--offline", "--model", "qwen15")
	if code != 0 {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	if l := lines["model summarizer"]; l["status"] != "ok" || !strings.Contains(fmt.Sprint(l["detail"]), "qwen2.5-coder:1.5b cannot be asked (model_not_found") ||
		!strings.Contains(fmt.Sprint(l["detail"]), "a run's primary model (qwen15) writes the task summaries instead") {
		t.Errorf("summarizer: %v", l)
	}
	if l := lines["model embedding"]; l["status"] != "ok" || !strings.Contains(fmt.Sprint(l["detail"]), "retrieval uses the offline embedder instead") {
		t.Errorf("embedding: %v", l)
	}
	if strings.Contains(out, "ollama pull") {
		t.Errorf("a fix needs the network:\n%s", out)
	}
}

// With no server, run and doctor say how to get one: Ollama itself, or make local-model, and
// lemmings doctor.
func TestNoServerSaysHowToGetOne(t *testing.T) {
	c := newCLI(t)
	c.config("ollama:\n  host: http://127.0.0.1:9\n")
	repo := prepared(t)
	r := c.run(repo, "run", "--offline", "do it")
	for _, want := range []string{"ollama serve", "ollama.com", "make local-model", "OLLAMA_HOST", "lemmings doctor"} {
		if r.code != exitFailed || !strings.Contains(r.stderr, want) {
			t.Errorf("run without a server: exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	lines, out, _ := doctorLines(t, c, repo, "--offline")
	if l := lines["model server"]; l["status"] != "fail" || !strings.Contains(fmt.Sprint(l["fix"]), "make local-model") || !strings.Contains(fmt.Sprint(l["detail"]), "(for primary)") {
		t.Errorf("model server: %v\n%s", l, out)
	}
}

// A primary model the server lacks: the fix names what works offline first, a model the server
// has, then the download.
func TestDoctorNamesTheModelsTheServerHasForAMissingPrimary(t *testing.T) {
	srv := qwen15Server(t)
	c := newCLI(t, "OLLAMA_HOST="+srv.URL())
	lines, out, code := doctorLines(t, c, prepared(t), "--offline", "--model", "qwen3:8b")
	l := lines["model primary"]
	fix := fmt.Sprint(l["fix"])
	if code != exitFailed || l["status"] != "fail" || !strings.HasPrefix(fix, "use a model the server has (qwen15): --model NAME") ||
		!strings.HasSuffix(fix, "or, with the network, run `ollama pull qwen3:8b`") {
		t.Errorf("exit %d, primary %v\n%s", code, l, out)
	}
}
