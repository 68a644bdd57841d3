package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
)

// The cosmetic items of a new user's third walk (issue 46), each through the binary.

// history's columns hold every node name, and a step written from outside the run is named by
// the command that wrote it, not the graph's __update__.
func TestHistoryNamesEveryStepInItsColumn(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	id := finishedRun(t, c, repo)["run_id"].(string)
	if u := c.run(repo, "undo", "t1", id, "--reason", "again"); u.code != 0 {
		t.Fatalf("undo: %d %s", u.code, u.stderr)
	}
	h := c.run(repo, "history", id)
	lines := strings.Split(strings.TrimSpace(h.stdout), "\n")
	header := lines[1]
	done := strings.Index(header, "DONE")
	var nodes []string
	for _, l := range lines[2:] {
		if len(l) <= done || l[done-2:done] != "  " || !strings.ContainsAny(l[done:done+1], "0123456789") {
			t.Errorf("a row out of its columns (DONE at %d):\n%s\n%s", done, header, l)
		}
		nodes = append(nodes, strings.Fields(l)[1])
	}
	got := strings.Join(nodes, " ")
	if strings.Contains(got, "__") || !strings.Contains(got, "mark_complete") || !strings.HasPrefix(got, "start ") || !strings.HasSuffix(got, " undo") {
		t.Errorf("history's nodes: %s", got)
	}
}

// MCP over stdio answers a request before initialize with a JSON-RPC error code, not 0.
func TestMCPRequestBeforeInitializeHasAnErrorCode(t *testing.T) {
	c := newCLI(t)
	repo := prepared(t)
	cmd := c.command(t.Context(), repo, "mcp")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lemmings mcp: %v", err)
	}
	var reply struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(out, &reply) != nil || reply.Error.Code != -32600 || !strings.Contains(reply.Error.Message, "send initialize first") {
		t.Errorf("tools/list before initialize: %s", out)
	}
}

// The index a demo leaves is named for the scripted embedder that built it, not for a real
// embedding model; the done run's evidence names the branch's last commit as a commit.
func TestTheDemosIndexAndEvidenceSayWhatTheyAre(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	dir := filepath.Join(t.TempDir(), "textstats")
	r := c.run(t.TempDir(), "demo", "--dir", dir)
	if r.code != 0 {
		t.Fatalf("demo: %d\n%s", r.code, r.stderr)
	}
	if !regexp.MustCompile(`passed at the branch's last commit [0-9a-f]{10}`).MatchString(r.stdout) || strings.Contains(r.stdout, "final tree") {
		t.Errorf("the demo's evidence:\n%s", r.stdout)
	}
	ix := c.run(dir, "index")
	out := ix.stdout + ix.stderr
	if !strings.Contains(out, "built by embedder ollama:"+demo.EmbeddingModel) || strings.Contains(out, "ollama:nomic-embed-text") {
		t.Errorf("index in the demo's folder:\n%s", out)
	}
}

// docs/models.md's default timeouts are the ones lemmings config prints.
func TestModelsDocSaysTheTimeoutsConfigPrints(t *testing.T) {
	c := newCLI(t)
	r := c.run(prepared(t), "config", "--json")
	want := map[string]string{}
	for _, l := range jsonLines(t, r.stdout) {
		if m := regexp.MustCompile(`^roles\.(\w+)\.timeout$`).FindStringSubmatch(fmt.Sprint(l["key"])); m != nil {
			want[m[1]] = fmt.Sprint(l["value"])
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "models.md"))
	if err != nil {
		t.Fatal(err)
	}
	para := regexp.MustCompile(`(?s)\*\*Timeouts\.\*\*.*?\n\n`).Find(doc)
	got := map[string]string{}
	for _, m := range regexp.MustCompile("`(\\w+)` (\\d+[hms])").FindAllSubmatch(para, -1) {
		got[string(m[1])] = string(m[2])
	}
	if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("docs/models.md says %v, lemmings config %v", got, want)
	}
}
