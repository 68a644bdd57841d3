package serve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/run"
)

// fixture is a demo repository with real runs made against the scripted
// model server, and a lemmings serve of it.
type fixture struct {
	t      testing.TB
	repo   string
	models *llmtest.Server
	srv    *Server
	http   *httptest.Server
	done   string // a finished demo run, its supervisors' docs still provisional
	paused string // a run paused for its milestones
	token  string // the server's access token; the client sends it
}

// testToken is the fixture server's access token.
const testToken = "fixture-token-0123456789abcdef"

// bearer adds the access token to every request, as a script does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// scriptedConfig points every role at the scripted server; supervisor docs
// stay provisional (no promotion) so there is something to review.
func scriptedConfig(url string, supervisors bool) *config.Config {
	cfg := demo.Config(url)
	cfg.Supervisors.Enabled = supervisors
	cfg.Supervisors.Mode = "blocking"
	cfg.Knowledge.PromoteAfter = 1000
	return cfg
}

type runKind int

const (
	withDone runKind = 1 << iota
	withPaused
	slowModels // runs resumed by the server get model answers that take 300ms
	deadModels // runs resumed by the server find no model server
)

func newFixture(t testing.TB, kinds runKind) *fixture {
	t.Helper()
	f := &fixture{t: t, repo: filepath.Join(t.TempDir(), "textstats")}
	ctx := context.Background()
	if err := demo.PrepareRepo(ctx, f.repo); err != nil {
		t.Fatal(err)
	}
	f.models = demo.NewServer(&demo.Script{})
	t.Cleanup(f.models.Close)
	resumeModels := f.models
	if kinds&slowModels != 0 {
		resumeModels = demo.NewServer(&demo.Script{LocalLatency: 300 * time.Millisecond})
		t.Cleanup(resumeModels.Close)
	}
	if kinds&withDone != 0 {
		res, err := run.Start(ctx, run.Options{RepoDir: f.repo, Remit: demo.Remit, Config: scriptedConfig(f.models.URL(), true)})
		if err != nil || res.Status != graph.StatusDone {
			t.Fatalf("demo run: %s %v", res.Status, err)
		}
		f.done = res.RunID
	}
	if kinds&withPaused != 0 {
		f.paused = f.startPaused("milestones")
	}
	resumeURL := resumeModels.URL()
	if kinds&deadModels != 0 {
		gone := demo.NewServer(&demo.Script{})
		resumeURL = gone.URL()
		gone.Close()
	}
	f.token = testToken
	srv, err := New(Options{Root: f.repo, Poll: 20 * time.Millisecond, Token: f.token,
		LoadConfig: func(string) (*config.Config, error) { return scriptedConfig(resumeURL, false), nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.http = httptest.NewServer(srv)
	t.Cleanup(func() { f.http.Close(); srv.Close() })
	return f
}

// startPaused starts a run that pauses for approval ("milestones" or "tasks").
func (f *fixture) startPaused(mode string) string {
	f.t.Helper()
	res, err := run.Start(context.Background(), run.Options{RepoDir: f.repo, Remit: demo.Remit, Approve: mode, Config: scriptedConfig(f.models.URL(), false)})
	if !errors.Is(err, graph.ErrPaused) || res.Status != graph.StatusPaused {
		f.t.Fatalf("run --approve %s: %s %v", mode, res.Status, err)
	}
	return res.RunID
}

func (f *fixture) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if f.token != "" {
		c.Transport = bearer{f.token}
	}
	return c
}

// get fetches a page and returns its status and body.
func (f *fixture) get(path string) (int, string) {
	f.t.Helper()
	resp, err := f.client().Get(f.http.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post submits a form the way the pages do (with the form token).
func (f *fixture) post(path string, form url.Values) (*http.Response, string) {
	f.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", f.srv.csrf)
	}
	resp, err := f.client().PostForm(f.http.URL+path, form)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", f.repo}, args...)...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustContain(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
