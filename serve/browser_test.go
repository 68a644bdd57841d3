package serve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/inspect"
)

// chromiumPath is Debian's chromium (Playwright's own browser download does
// not work on these machines).
const chromiumPath = "/usr/bin/chromium"

// TestBrowser drives lemmings serve in a real headless chromium with
// playwright-core (serve/e2e/browser.mjs): the demo's run with its board and
// report, a paused run approved with its events arriving live, a provisional
// knowledge document confirmed. make test-browser runs it (LEMMINGS_BROWSER=1);
// LEMMINGS_SCREENSHOTS=dir also saves the screenshots docs/serve.md shows.
func TestBrowser(t *testing.T) {
	if os.Getenv("LEMMINGS_BROWSER") != "1" {
		t.Skip("browser test: run make test-browser (LEMMINGS_BROWSER=1; needs chromium and npm ci in serve/e2e)")
	}
	chromium := chromiumPath
	if p := os.Getenv("LEMMINGS_CHROMIUM"); p != "" {
		chromium = p
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("no chromium at %s: apt-get install -y chromium (.ci/run does it)", chromium)
	}
	if _, err := os.Stat(filepath.Join("e2e", "node_modules", "playwright-core")); err != nil {
		t.Fatal("no playwright-core in serve/e2e/node_modules: run npm ci in serve/e2e (make test-browser does it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("no node on PATH: the browser test drives chromium from Node.js")
	}
	f := newFixture(t, withDone|withPaused|slowModels)
	shots := os.Getenv("LEMMINGS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "browser.mjs")
	cmd.Dir = "e2e"
	cmd.Env = append(os.Environ(), "BASE_URL="+f.http.URL, "TOKEN="+f.token, "DONE_RUN="+f.done, "PAUSED_RUN="+f.paused,
		"CHROMIUM="+chromium, "SHOTS_DIR="+shots)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("browser.mjs (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
	// What the browser did happened for real, on the files.
	store, _ := inspect.Open(f.repo)
	if r := store.Get(ctx, f.paused); r.Status != "done" {
		t.Errorf("approved run is %s, want done", r.Status)
	} else if len(r.State.Tells) != 1 {
		t.Errorf("the approved run took in %d told messages, want the one the page sent", len(r.State.Tells))
	}
	doc := f.git("show", "lemmings/"+f.done+":docs/knowledge/conventions/doc-comments.md")
	if !strings.Contains(doc, "_Status: established_") {
		t.Errorf("confirmed doc on the branch:\n%s", doc)
	}
}
