package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/buildtest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// lemmingsBin builds the lemmings binary once per test process: the runs the
// server starts are real lemmings processes.
func lemmingsBin(t testing.TB) string {
	t.Helper()
	return buildtest.Binary(t, "github.com/lemmings-dev/lemmings/cmd/lemmings")
}

// scriptedYAML points every role at a scripted model server (the demo's team).
func scriptedYAML(url string) string {
	return fmt.Sprintf(`ollama:
  host: %[1]s
openrouter:
  base_url: %[1]s/v1
  api_key: test-key
roles:
  primary: {model: %[2]s, edit_protocol: json}
  summarizer: {model: %[3]s}
  embedding: {model: %[4]s}
  supervisor: {model: %[5]s}
supervisors:
  mode: blocking
retry:
  initial_backoff: 10ms
limits:
  fix_rounds: 0
`, url, demo.PrimaryModel, demo.SummarizerModel, demo.EmbeddingModel, demo.SupervisorModel)
}

// fixture is a demo repository whose runs use the demo's scripted team, and
// the environment a lemmings process needs for it: none of the user's
// lemmings, Ollama or OpenRouter settings, a configuration home of its own.
type fixture struct {
	repo       string
	configHome string
	stateHome  string // XDG_STATE_HOME: lemmings mcp --http keeps its token there
	env        []string
	models     *llmtest.Server
}

func newFixture(t *testing.T, sc *demo.Script) *fixture {
	t.Helper()
	f := &fixture{repo: filepath.Join(t.TempDir(), "repo"), configHome: t.TempDir(), stateHome: t.TempDir()}
	if err := demo.PrepareRepo(context.Background(), f.repo); err != nil {
		t.Fatal(err)
	}
	f.models = demo.NewServer(sc)
	t.Cleanup(f.models.Close) // after the runs' processes have ended (cleanups run last first)
	if err := os.MkdirAll(filepath.Join(f.configHome, "lemmings"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.configHome, "lemmings", "config.yaml"), []byte(scriptedYAML(f.models.URL())), 0o644); err != nil {
		t.Fatal(err)
	}
	f.env = cleanEnv("XDG_CONFIG_HOME="+f.configHome, "XDG_STATE_HOME="+f.stateHome)
	return f
}

// config loads the configuration the fixture's processes see.
func (f *fixture) config() (*config.Config, error) {
	env := map[string]string{}
	for _, kv := range f.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, _, err := config.Load(config.LoadOptions{RepoRoot: f.repo, UserConfigDir: filepath.Join(f.configHome, "lemmings"),
		Env: func(k string) string { return env[k] }})
	return cfg, err
}

// cleanEnv is this process's environment without the user's lemmings, Ollama
// and OpenRouter settings, plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LEMMINGS_") || strings.HasPrefix(kv, "OLLAMA_") ||
			strings.HasPrefix(kv, "OPENROUTER_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// server builds an MCP server on the fixture's repository; the processes it
// starts are waited for when the test ends.
func (f *fixture) server(t *testing.T) *Server {
	t.Helper()
	s, err := New(Options{Root: f.repo, Exe: lemmingsBin(t), Env: f.env, Version: "test", Poll: 50 * time.Millisecond,
		StartWait: 20 * time.Second, LoadConfig: f.config})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.waitChildren(t, 2*time.Minute) })
	return s
}

// waitChildren waits for the processes the server started; one still
// running at the deadline fails the test (and is killed).
func (s *Server) waitChildren(t *testing.T, timeout time.Duration) {
	s.mu.Lock()
	var cs []*child
	for _, c := range s.children {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	deadline := time.After(timeout)
	for _, c := range cs {
		select {
		case <-c.done:
		case <-deadline:
			t.Errorf("lemmings %s for run %s still running after %s", c.verb, c.runID, timeout)
			return
		}
	}
}

// client connects a Go SDK client to s over in-memory transports; progress
// notifications go to progress.
func client(t *testing.T, s *Server, progress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress(r.Params) }
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls a tool and decodes its structured output into out; a tool error
// is returned as an error with the tool's text.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any, meta ...mcp.Meta) error {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if len(meta) > 0 {
		p.Meta = meta[0]
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		return errors.New(text(res))
	}
	if out != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: structured output %s: %v", name, data, err)
		}
	}
	return nil
}

// mustCall is call that fails the test on a tool error.
func mustCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any, meta ...mcp.Meta) {
	t.Helper()
	if err := call(t, cs, name, args, out, meta...); err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// waitUntil polls cond until it holds or the timeout passes.
func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runDone reports whether a run is done and no process holds it.
func runDone(repo, id string) bool {
	store, err := inspect.Open(repo)
	if err != nil {
		return false
	}
	r, err := store.Find(context.Background(), id)
	return err == nil && !r.Active && r.DisplayStatus() == "done"
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// command prepares the binary with env, started by the caller.
func command(bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return cmd
}

// processEnded waits until the lemmings process of a finished run has
// printed its closing summary, so the test's directories can be removed.
func processEnded(t *testing.T, repo, id string) {
	t.Helper()
	waitUntil(t, "the run's process to print its summary", time.Minute, func() bool {
		data, _ := os.ReadFile(LogPath(repo, id))
		return strings.Contains(string(data), "cleanup: lemmings clean "+id)
	})
	time.Sleep(200 * time.Millisecond) // from its last line to its exit
}
