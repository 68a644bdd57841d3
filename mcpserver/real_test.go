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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
)

// The real MCP clients: the MCP Inspector's CLI (make mcp-inspector installs
// it into mcpserver/e2e) and Qwen Code (make clis, into .tools/clis). They
// run in make test-ollama, like the other real-CLI tests.

// realClient returns an installed client program. Missing, it skips the
// test, except where the client is required: LEMMINGS_REAL_OLLAMA=1 (make
// test-ollama installs the clients first) or CI set, where it fails.
// LEMMINGS_REAL_OLLAMA=0 (make test's unit runs) skips: the real clients run
// once per make test.
func realClient(t *testing.T, path, install string) string {
	t.Helper()
	if os.Getenv("LEMMINGS_REAL_OLLAMA") == "0" {
		t.Skip("real client tests disabled by LEMMINGS_REAL_OLLAMA=0")
	}
	required := os.Getenv("LEMMINGS_REAL_OLLAMA") == "1" || os.Getenv("CI") != ""
	missing := func(msg string) {
		if required {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(path); err != nil {
		missing(path + " is not installed: run `" + install + "`")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH: the MCP clients need Node.js 20 or later")
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
	if !strings.Contains(toolText(report), "**Outcome:** done") {
		t.Errorf("report: %v", report)
	}
	board := must("--method", "resources/read", "--uri", "lemmings://runs/"+id+"/board")
	if contents := board["contents"].([]any); len(contents) != 1 || !strings.Contains(contents[0].(map[string]any)["text"].(string), "- [x] t1") {
		t.Errorf("board: %v", board)
	}

	// Streamable HTTP, with a fixed token: the Inspector sends it as a header.
	const token = "inspector-test-token"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stop := httpServer(t, bin, f.env, f.repo, "--token-file", tokenFile)
	defer stop()
	out, raw, ok := inspector(t, f.env, url, "--transport", "http", "--method", "tools/list", "--header", "Authorization: Bearer "+token)
	if !ok || len(out["tools"].([]any)) != len(allTools) {
		t.Errorf("tools/list over HTTP with the token:\n%s", raw)
	}
	if _, raw, ok := inspector(t, f.env, url, "--transport", "http", "--method", "tools/list"); ok || !strings.Contains(raw, "this server needs its token") {
		t.Errorf("tools/list over HTTP without the token succeeded or did not say why it failed:\n%s", raw)
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
