package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/codingcli"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/sandbox"
)

// The real MCP clients: the MCP Inspector's CLI (make mcp-inspector installs
// it into mcpserver/e2e) and Qwen Code (make clis, into .tools/clis). They
// run in make test-ollama, like the other real-CLI tests.

// realClient returns an installed client program. The real clients run
// only when asked (LEMMINGS_REAL_OLLAMA=1: make test-ollama installs them
// first), and then a missing one fails the test.
func realClient(t *testing.T, path, install string) string {
	t.Helper()
	realollama.SkipUnlessAsked(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(path + " is not installed: run `" + install + "`")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH: the MCP clients need Node.js 20 or later")
	}
	return path
}

// inspectorDir is where make mcp-inspector installs the Inspector's CLI.
func inspectorDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("e2e", "node_modules", "@modelcontextprotocol", "inspector-cli"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// inspector runs the Inspector's CLI with args and decodes the JSON it
// prints; ok is false when it exits non-zero (its output is then returned in
// raw).
func inspector(t *testing.T, env []string, args ...string) (out map[string]any, raw string, ok bool) {
	t.Helper()
	dir := inspectorDir(t)
	bin := realClient(t, filepath.Join(dir, "..", "..", ".bin", "mcp-inspector-cli"), "make mcp-inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--cli"}, args...)...)
	// Inspector CLI 1.0.3 looks for its package.json at ../package.json of
	// the working directory (and imports it relative to its own code):
	// started from its build directory, both agree.
	cmd.Dir = filepath.Join(dir, "build")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	raw = stdout.String() + stderr.String()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil, raw, false
	}
	if err != nil {
		t.Fatalf("inspector %v: %v\n%s", args, err, raw)
	}
	s := stdout.String()
	if i := strings.Index(s, "{"); i >= 0 {
		s = s[i:]
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("inspector %v printed no JSON: %v\n%s", args, err, raw)
	}
	return out, raw, true
}

// The MCP Inspector's CLI lists and calls lemmings' tools and reads its
// resources, over stdio against the binary, and over streamable HTTP with
// the token.
func TestRealInspectorCLIListsAndCallsTheTools(t *testing.T) {
	realClient(t, filepath.Join(inspectorDir(t), "build", "index.js"), "make mcp-inspector")
	f := newFixture(t, &demo.Script{})
	bin := lemmingsBin(t)
	server := []string{bin, "mcp", "-C", f.repo}
	must := func(args ...string) map[string]any {
		t.Helper()
		out, raw, ok := inspector(t, f.env, append(slices.Clone(server), args...)...)
		if !ok {
			t.Fatalf("inspector %v failed:\n%s", args, raw)
		}
		return out
	}

	var names []string
	for _, tool := range must("--method", "tools/list")["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	if !slices.Equal(names, allTools) {
		t.Fatalf("tools/list: %v, want %v", names, allTools)
	}
	templates := must("--method", "resources/templates/list")["resourceTemplates"].([]any)
	if len(templates) != 2 {
		t.Errorf("resources/templates/list: %v", templates)
	}
	status := must("--method", "tools/call", "--tool-name", "status", "--tool-arg", "run_id=nope")
	if status["isError"] != true || !strings.Contains(toolText(status), "no such run") {
		t.Errorf("status of an unknown run: %v", status)
	}

	started := must("--method", "tools/call", "--tool-name", "run", "--tool-arg", "remit="+demo.Remit, "--tool-arg", "no_supervisors=true")
	id, _ := started["structuredContent"].(map[string]any)["run_id"].(string)
	if started["isError"] == true || id == "" {
		t.Fatalf("run: %v", started)
	}
	waitUntil(t, "the run to finish", 3*time.Minute, func() bool { return runDone(f.repo, id) })
	processEnded(t, f.repo, id)
	report := must("--method", "tools/call", "--tool-name", "report", "--tool-arg", "run_id="+id)
	if !strings.Contains(toolText(report), "**Status:** done") {
		t.Errorf("report: %v", report)
	}
	board := must("--method", "resources/read", "--uri", "lemmings://runs/"+id+"/board")
	if contents := board["contents"].([]any); len(contents) != 1 || !strings.Contains(contents[0].(map[string]any)["text"].(string), "- [x] t1") {
		t.Errorf("board: %v", board)
	}

	// Streamable HTTP on loopback, configured as docs/mcp.md says: the
	// Inspector sends the token from lemmings' token file as a header.
	url, stop := httpServer(t, bin, f.env, f.repo)
	defer stop()
	data, err := os.ReadFile(filepath.Join(f.stateHome, "lemmings", "tokens", "mcp.token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(data))
	out, raw, ok := inspector(t, f.env, url, "--transport", "http", "--method", "tools/list", "--header", "Authorization: Bearer "+token)
	if !ok || len(out["tools"].([]any)) != len(allTools) {
		t.Errorf("tools/list over HTTP with the token:\n%s", raw)
	}
	if _, raw, ok := inspector(t, f.env, url, "--transport", "http", "--method", "tools/list"); ok || !strings.Contains(raw, "this server needs its token") {
		t.Errorf("tools/list over HTTP without the token succeeded or did not say why it failed:\n%s", raw)
	}
	// --token-file chooses the token instead.
	const fixed = "inspector-test-token"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(fixed+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url2, stop2 := httpServer(t, bin, f.env, f.repo, "--token-file", tokenFile)
	defer stop2()
	if out, raw, ok := inspector(t, f.env, url2, "--transport", "http", "--method", "tools/list", "--header", "Authorization: Bearer "+fixed); !ok || len(out["tools"].([]any)) != len(allTools) {
		t.Errorf("tools/list over HTTP with --token-file's token:\n%s", raw)
	}
}

// httpServer starts lemmings mcp --http on a free loopback port and returns
// its URL.
func httpServer(t *testing.T, bin string, env []string, repo string, flags ...string) (string, func()) {
	t.Helper()
	cmd := command(bin, env, append([]string{"mcp", "-C", repo, "--http", "127.0.0.1:0"}, flags...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "lemmings mcp: ")
	if err != nil || !ok {
		stop()
		t.Fatalf("lemmings mcp --http printed %q (%v)", line, err)
	}
	return url, stop
}

func toolText(res map[string]any) string {
	var parts []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// goEnv is the Go build environment lemmings' gates need under a client that
// passes its MCP servers only a few variables of its own.
func goEnv(t *testing.T) map[string]string {
	env := map[string]string{}
	out, err := exec.Command("go", "env", "GOCACHE", "GOPATH", "GOMODCACHE", "GOTOOLCHAIN").Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		env[[]string{"GOCACHE", "GOPATH", "GOMODCACHE", "GOTOOLCHAIN"}[i]] = strings.TrimSpace(v)
	}
	env["PATH"] = os.Getenv("PATH")
	return env
}

// qwenBin is the Qwen Code make clis installs ($LEMMINGS_CLIS_DIR overrides
// where).
func qwenBin(t *testing.T) string {
	dir := os.Getenv("LEMMINGS_CLIS_DIR")
	if dir == "" {
		abs, err := filepath.Abs(filepath.Join("..", ".tools", "clis"))
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	return realClient(t, filepath.Join(dir, "node_modules", ".bin", "qwen"), "make clis")
}

// toolResults counts the tool messages a chat request carries: how far into
// its work the agent is.
func toolResults(c llmtest.Call) int {
	n := 0
	for _, m := range c.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

// offered is the name under which the agent offers one of lemmings' tools
// to its model ("" when it offers none such).
func offered(c llmtest.Call, tool string) string {
	for _, t := range c.Tools {
		if strings.Contains(t.Name, "lemmings") && strings.HasSuffix(t.Name, "__"+tool) {
			return t.Name
		}
	}
	return ""
}

var runIDPattern = regexp.MustCompile(`\b\d{8}-\d{6}-[0-9a-f]{6}\b`)

// A real coding agent hands a remit to lemmings: Qwen Code, configured with
// lemmings mcp as an MCP server in its settings.json, is driven by a scripted
// model to call lemmings' run tool and then its status tool; lemmings' own
// run uses the demo's scripted team. The run goes on after Qwen Code (and
// with it the MCP server) has exited, and finishes.
func TestRealQwenCodeHandsARemitToLemmings(t *testing.T) {
	qwen := qwenBin(t)
	f := newFixture(t, &demo.Script{ImplementorLatency: 500 * time.Millisecond})
	home := t.TempDir()
	serverEnv := goEnv(t)
	serverEnv["XDG_CONFIG_HOME"] = f.configHome
	settings := map[string]any{"mcpServers": map[string]any{"lemmings": map[string]any{
		"command": lemmingsBin(t), "args": []string{"mcp", "-C", f.repo}, "env": serverEnv,
		"trust": true, "alwaysLoadTools": true, "timeout": 120000,
	}}}
	data, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.MkdirAll(filepath.Join(home, ".qwen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".qwen", "settings.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	agentModel := llmtest.NewServer()
	defer agentModel.Close()
	var runID string
	agentModel.Script(
		llmtest.Step{Name: "hand over the remit", Match: func(c llmtest.Call) bool { return toolResults(c) == 0 && offered(c, "run") != "" },
			Respond: func(c llmtest.Call) llmtest.Reply {
				args, _ := json.Marshal(map[string]any{"remit": demo.Remit})
				return llmtest.Reply{Content: "Handing this to lemmings.", ToolCalls: []llmtest.ToolCall{{Name: offered(c, "run"), Arguments: args}}}
			}},
		llmtest.Step{Name: "ask for its status", Match: func(c llmtest.Call) bool { return toolResults(c) == 1 && offered(c, "status") != "" },
			Respond: func(c llmtest.Call) llmtest.Reply {
				runID = runIDPattern.FindString(c.Messages[len(c.Messages)-1].Content)
				args, _ := json.Marshal(map[string]any{"run_id": runID})
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: offered(c, "status"), Arguments: args}}}
			}},
		llmtest.Step{Name: "answer", Match: func(c llmtest.Call) bool { return toolResults(c) == 2 },
			Respond: func(c llmtest.Call) llmtest.Reply {
				return llmtest.Reply{Content: "lemmings took the remit as run " + runID + "."}
			}},
	)

	p, _ := codingcli.Lookup("qwen")
	p.Args = append([]string{qwen}, p.Args[1:]...)
	// The user's agent runs outside lemmings' sandbox (codingcli confines a
	// CLI that works *for* lemmings): its MCP server must be able to start
	// a run, which writes .git/info/exclude and adds a worktree.
	unconfined, err := sandbox.New(sandbox.Config{Mode: sandbox.ModeOff})
	if err != nil {
		t.Fatal(err)
	}
	defer unconfined.Close()
	res, err := codingcli.Run(context.Background(), p, codingcli.Request{Sandbox: unconfined,
		Dir: f.repo, Prompt: "Hand this remit to lemmings and tell me its status: " + demo.Remit, Model: "scripted", Timeout: 4 * time.Minute,
		Env: map[string]string{"HOME": home, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": agentModel.URL() + "/v1", "OPENAI_MODEL": "scripted"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Failed != "" {
		t.Fatalf("qwen exit %d, timed out %v, failed %q; stderr:\n%s", res.ExitCode, res.TimedOut, res.Failed, res.Stderr)
	}
	if pending := agentModel.Pending(); len(pending) > 0 {
		calls := agentModel.ChatCalls()
		var tools []string
		if len(calls) > 0 {
			for _, tl := range calls[0].Tools {
				tools = append(tools, tl.Name)
			}
		}
		t.Fatalf("the agent never reached %v; it offered its model %v\nstderr:\n%s", pending, tools, res.Stderr)
	}
	var called []string
	for _, e := range res.Events {
		if e.Kind == codingcli.EventToolCall {
			called = append(called, e.Tool)
		}
	}
	if !slices.Equal(called, []string{"mcp__lemmings__run", "mcp__lemmings__status"}) {
		t.Errorf("tool calls %v, want lemmings' run then status", called)
	}
	if runID == "" {
		t.Fatal("the run tool's answer, as the agent's model saw it, carries no run id")
	}
	// The status the agent's model read is lemmings' answer for that run.
	calls := agentModel.ChatCalls()
	status := calls[len(calls)-1].Messages[len(calls[len(calls)-1].Messages)-1].Content
	if !strings.Contains(status, runID) || !strings.Contains(status, `"active":true`) {
		t.Errorf("the status tool's answer the model read (want the run, moving):\n%s", status)
	}
	if !strings.Contains(res.Final, runID) {
		t.Errorf("final answer %q", res.Final)
	}
	if runDone(f.repo, runID) {
		t.Fatal("the run was done before the agent exited: nothing shows it outlives the agent's session")
	}
	waitUntil(t, "the run handed over by the agent to finish", 3*time.Minute, func() bool { return runDone(f.repo, runID) })
	processEnded(t, f.repo, runID)
	report, err := os.ReadFile(filepath.Join(f.repo, ".lemmings", "runs", runID, "report.md"))
	if err != nil || !strings.Contains(string(report), "**Status:** done") {
		t.Errorf("report: %v\n%s", err, report)
	}
}
