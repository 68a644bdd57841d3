package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/sandbox"
)

// The attack of issue 33, through the binary: a coding CLI (confined, but
// with the network, as every coding CLI is) fetched another run's page
// from lemmings serve on loopback, read its form token and approved its
// pause. Now it can read neither the server's token file nor any page, and
// its approval is refused; a plain local process fares no better.
func TestALocalProcessCannotApproveARunThroughServe(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 plays the hostile process")
	}
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	if r := c.run(repo, "run", demo.Remit, "--approve", "milestones", "--no-supervisors"); r.code != exitPaused {
		t.Fatalf("run --approve milestones: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	runs, _ := os.ReadDir(filepath.Join(repo, ".lemmings", "runs"))
	if len(runs) != 1 {
		t.Fatalf("runs: %d", len(runs))
	}
	id := runs[0].Name()
	url := startServe(t, c, repo, "--addr", "127.0.0.1:0")
	m := regexp.MustCompile(`^(http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{32})$`).FindStringSubmatch(url)
	if m == nil {
		t.Fatalf("serve printed %q", url)
	}
	base, token := m[1], m[2]
	tokenFile := filepath.Join(c.stateHome, "lemmings", "tokens", "serve.token")

	// The attacker's script: read the token, fetch the run's page for its
	// form token, approve; each step says what it got.
	script := `
import re, urllib.request, urllib.error
def status(req):
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""
try:
    tok = open("` + tokenFile + `").read().strip(); print("READ-TOKEN", tok)
except OSError as e:
    tok = ""; print("no token:", e.strerror)
auth = {"Authorization": "Bearer " + tok} if tok else {}
csrf = "guess"
for path in ["/", "/runs/` + id + `", "/runs/` + id + `/events"]:
    code, body = status(urllib.request.Request("` + base + `" + path, headers=auth))
    print("GET", path, code)
    m = re.search(r'name="csrf" value="([0-9a-f]+)"', body)
    if m: csrf = m.group(1); print("GOT-CSRF", csrf)
code, _ = status(urllib.request.Request("` + base + `/runs/` + id + `/approve", data=("csrf=" + csrf).encode(), method="POST",
    headers=dict(auth, **{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})))
print("POST approve", code)
`
	check := func(who, out string) {
		t.Helper()
		if strings.Contains(out, "READ-TOKEN") || strings.Contains(out, token) || strings.Contains(out, "GOT-CSRF") {
			t.Errorf("%s got the token or a page:\n%s", who, out)
		}
		for _, want := range []string{"GET / 401", "GET /runs/" + id + " 401", "GET /runs/" + id + "/events 401", "POST approve 401"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q missing:\n%s", who, want, out)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A coding CLI's view: confined, with the network.
	t.Setenv("XDG_STATE_HOME", c.stateHome) // the sandbox hides this one's tokens
	box, err := sandbox.New(sandbox.Config{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	if box.Level().Mounts {
		cmd, cleanup, err := box.Command(ctx, sandbox.Spec{Dir: t.TempDir(), Network: true}, "python3", "-c", script)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := cmd.CombinedOutput()
		cleanup()
		check("a confined coding CLI", string(out))
	} else {
		t.Logf("no private mounts here (%s): only a plain process is tried", box.Level().NamespaceErr)
	}
	// Any other local process without the token (another user's cannot read
	// the 0600 file either).
	var out bytes.Buffer
	stranger := exec.CommandContext(ctx, "python3", "-c", strings.Replace(script, tokenFile, "/nonexistent/token", 1))
	stranger.Stdout, stranger.Stderr = &out, &out
	_ = stranger.Run()
	check("a local process", out.String())

	if r := c.run(repo, "status", "--json"); !strings.Contains(r.stdout, `"status":"paused"`) {
		t.Errorf("the run is no longer paused:\n%s", r.stdout)
	}
	// The user, with the token, is let in.
	req, _ := http.NewRequest("GET", base+"/runs/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `name="csrf"`) {
		t.Errorf("with the token: %d", resp.StatusCode)
	}
}
