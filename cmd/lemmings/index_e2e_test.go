package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// embedCalls counts the server's embedding requests for model.
func embedCalls(calls []string, model string) int {
	n := 0
	for _, m := range calls {
		if m == model {
			n++
		}
	}
	return n
}

// A search embeds the query with the model the index was built with, as the
// README says, also when the configuration now names another model: the
// other's vectors would not match the chunks'.
func TestSearchUsesTheIndexsModelWhenTheConfigurationNamesAnother(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	repo := prepared(t)
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	expectExit(t, c, repo, exitOK, []string{"index"})
	manifest, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "index", "manifest.json"))
	c.config(strings.Replace(scriptedConfig(srv.URL(), "blocking"), "embedding: {model: "+demo.EmbeddingModel+"}", "embedding: {model: another-embedder}", 1))
	before := embedModels(srv)
	s := expectExit(t, c, repo, exitOK, []string{"search", "mean word length", "--json"})
	if strings.Contains(s.stderr, "keywords only") || !strings.Contains(s.stdout, `"path":"textstats.go"`) {
		t.Fatalf("search fell back to keywords or found nothing:\n%s\n%s", s.stdout, s.stderr)
	}
	after := embedModels(srv)
	if embedCalls(after, demo.EmbeddingModel) <= embedCalls(before, demo.EmbeddingModel) || embedCalls(after, "another-embedder") != 0 {
		t.Errorf("the query was not embedded by the index's model: %v", after[len(before):])
	}
	if now, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "index", "manifest.json")); string(now) != string(manifest) {
		t.Errorf("the search changed the index:\n%s", now)
	}
}

// --offline asks nothing but the Ollama server, and the embedding model is
// on it: a run keeps the index that model built instead of throwing it
// away for the offline embedder's.
func TestAnOfflineRunKeepsTheIndexOfTheLocalEmbeddingModel(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	repo := prepared(t)
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	expectExit(t, c, repo, exitOK, []string{"index"})
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, onePlan)
	r := c.run(repo, "run", "--offline", demo.Remit, "--plan", plan)
	if r.code != exitOK {
		t.Fatalf("offline run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "rebuilt from scratch") || strings.Contains(r.stdout+r.stderr, "offline embedder") {
		t.Errorf("the offline run replaced the index:\n%s\n%s", r.stdout, r.stderr)
	}
	manifest, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "index", "manifest.json"))
	if !strings.Contains(string(manifest), demo.EmbeddingModel) {
		t.Errorf("the index is no longer the embedding model's: %s", manifest)
	}
}

// embedModels lists the model of each embedding request the server got.
func embedModels(srv *llmtest.Server) []string {
	var out []string
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/api/embed") {
			out = append(out, c.Model)
		}
	}
	return out
}
