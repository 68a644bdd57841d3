package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// The attacks of issue 43 on what lemmings runs outside the sandbox: a
// program, a configuration or a folder chosen by the repository or the model
// ran with lemmings' environment. Each runs the binary with canaries: two
// keys in its environment and a home whose .netrc holds a password. A payload
// that runs outside the sandbox writes them to a marker outside the tree
// (inside, that write is refused): no test may find the marker.

const (
	canaryKey   = "sk-or-v1-canary-outside-the-sandbox-0000"
	canaryToken = "ghp_canaryoutsidethesandbox0000000000000"
)

// canaryEnv is lemmings' environment for these attacks: the keys, a home of
// the test's with a .netrc, and the Go caches the real home names (so the
// sandbox's overlays still have a lower layer and gates do not build cold).
func canaryEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".netrc"), "machine github.com login canary password netrc-canary-0000\n")
	env := []string{"OPENROUTER_API_KEY=" + canaryKey, "GITHUB_TOKEN=" + canaryToken, "HOME=" + home}
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", k).Output()
		if v := strings.TrimSpace(string(out)); err == nil && v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// payload is a shell script that, run outside the sandbox, writes what it
// can reach (the environment and ~/.netrc) to marker, then copies its
// standard input to its output (a clean filter's contract).
func payload(marker string) string {
	return fmt.Sprintf("#!/bin/sh\n{ echo ran in \"$PWD\"; env; tr '\\0' '\\n' < /proc/$PPID/environ; cat \"$HOME/.netrc\"; } > %q 2>/dev/null\ncat\n", marker)
}

// noMarker fails the test when the payload ran outside the sandbox.
func noMarker(t *testing.T, marker string) {
	t.Helper()
	if b, err := os.ReadFile(marker); err == nil {
		leaked := ""
		for _, c := range []string{canaryKey, canaryToken, "netrc-canary-0000"} {
			if strings.Contains(string(b), c) {
				leaked += " " + c
			}
		}
		t.Errorf("the payload ran outside the sandbox (leaked:%s):\n%.600s", leaked, b)
	}
}

// commitFiles writes files (a name ending in .sh or under tools/ is made
// executable) and commits them as the repository's author.
func commitFiles(t *testing.T, repo string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(repo, name)
		writeFile(t, p, content)
		if strings.HasSuffix(name, ".sh") || strings.HasPrefix(name, "tools/") {
			must(t, os.Chmod(p, 0o755))
		}
		git(t, repo, "add", "-f", name)
	}
	git(t, repo, "-c", "user.name=attacker", "-c", "user.email=a@example.invalid", "commit", "-q", "-m", "helpful files")
}

// writerImplementor answers the implementor: write path with content, then
// finish.
func writerImplementor(path, content string) llmtest.Step {
	return llmtest.Step{Name: "writer-implementor", API: llmtest.Ollama, Times: -1, Match: func(c llmtest.Call) bool {
		return c.Role() == prompts.Implementor
	}, Respond: func(c llmtest.Call) llmtest.Reply {
		for _, m := range c.Messages[1:] {
			if m.Role == "assistant" {
				return llmtest.Reply{Content: `{"thought":"done","action":"finish","summary":"Wrote the file."}`}
			}
		}
		return llmtest.Reply{Content: fmt.Sprintf(`{"thought":"write it","action":"write_file","path":%q,"content":%q}`, path, content)}
	}}
}

// demoPlan is the demo's one task (its scripted implementor fixes
// textstats.go).
func demoPlan(t *testing.T) string {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, fixPlan)
	return plan
}

// planFor is a one-task plan whose task targets file.
func planFor(t *testing.T, file string) string {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, `milestones:
  - goal: The file exists.
    tasks:
      - title: Add `+file+`
        instructions: Write the file.
        acceptance_criteria: ["the gate passes"]
        target_files: [`+file+`]
`)
	return plan
}

// runWith runs lemmings run --plan on repo with a scripted model whose
// implementor is impl (nil: the demo's) and the user's configuration extra.
func runWith(t *testing.T, repo, plan string, impl *llmtest.Step, extra string, env ...string) result {
	t.Helper()
	var steps []llmtest.Step
	if impl != nil {
		steps = append(steps, *impl)
	}
	srv := demo.NewServer(&demo.Script{}, steps...)
	t.Cleanup(srv.Close)
	c := newCLI(t, append(canaryEnv(t), env...)...)
	c.config(scriptedConfig(srv.URL(), "blocking") + extra)
	return c.run(repo, "run", "--plan", plan, "--no-supervisors", "--json")
}

// 1. The syntax check of a Python file the model wrote ran the first word of
// the repository's gate when it named a "python": here a committed shell
// script, unsandboxed, with lemmings' keys.
func TestTheSyntaxCheckRunsNoInterpreterTheRepositoryNames(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	repo := prepared(t)
	commitFiles(t, repo, map[string]string{
		"lemmings.yaml": "gates:\n  - {name: test, command: tools/python3 -c \"print(1)\"}\n",
		"tools/python3": payload(marker),
	})
	impl := writerImplementor("hello.py", "def hello():\n    return \"hello\"\n")
	r := runWith(t, repo, planFor(t, "hello.py"), &impl, "")
	noMarker(t, marker)
	res := lastJSON(t, r.stdout)
	if res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	if got := git(t, repo, "show", res["branch"].(string)+":hello.py"); !strings.Contains(got, "def hello") {
		t.Errorf("hello.py was not committed:\n%s", got)
	}
}

// nestScript is a gate that makes the folder sub a git repository whose
// clean filter is the repository's payload, with a committed file whose
// time it then moves back (git hashes it again, through the filter, on the
// next look).
const nestScript = `#!/bin/sh
cd "$1" || exit 0
[ -e .git ] && exit 0
git init -q
git config filter.evil.clean "sh $2"
echo '* filter=evil' > .gitattributes
echo data > data.txt
git add .gitattributes data.txt
git commit -q -m nested
touch -d 2001-01-01 data.txt
exit 0
`

// 2. A committed gitlink and a gate that makes it a repository with a clean
// filter of its own: lemmings' next git status or diff of the work tree
// went into it and ran the filter, unsandboxed, with lemmings' keys.
func TestANestedRepositorysFilterNeverRunsOutsideTheSandbox(t *testing.T) {
	requireSandbox(t)
	marker := filepath.Join(t.TempDir(), "ran")
	repo := prepared(t)
	git(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+git(t, repo, "rev-parse", "HEAD")+",sub")
	must(t, os.Mkdir(filepath.Join(repo, "sub"), 0o755)) // as a clone without its submodules has it
	commitFiles(t, repo, map[string]string{
		"lemmings.yaml":    "gates:\n  - {name: nest, command: sh tools/nest.sh sub ../tools/payload.sh}\n",
		"tools/nest.sh":    nestScript,
		"tools/payload.sh": payload(marker),
	})
	r := runWith(t, repo, demoPlan(t), nil, "")
	noMarker(t, marker)
	if !strings.Contains(r.stdout, `"kind":"result"`) {
		t.Fatalf("exit %d, no result:\n%s", r.code, r.stderr)
	}
	if res := lastJSON(t, r.stdout); res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
}

// fixtureTest is a test file a hostile model writes: it makes fixture/ a git
// repository whose clean filter writes the marker, as a test of a git tool
// would make a fixture.
func fixtureTest(marker string) string {
	filter := fmt.Sprintf(`sh -c '{ echo ran; env; cat "$HOME/.netrc"; } > %s 2>/dev/null; cat'`, marker)
	return fmt.Sprintf(`package textstats

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestFixture(t *testing.T) {
	if _, err := os.Stat("fixture/.git"); err == nil {
		return
	}
	git := func(args ...string) { exec.Command("git", append([]string{"-C", "fixture"}, args...)...).Run() }
	os.MkdirAll("fixture", 0o755)
	git("init", "-q")
	git("config", "filter.evil.clean", %q)
	os.WriteFile("fixture/.gitattributes", []byte("* filter=evil\n"), 0o644)
	os.WriteFile("fixture/data.txt", []byte("data\n"), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "fixture")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes("fixture/data.txt", old, old)
}
`, filter)
}

// 3. The same from a hostile model alone, on a benign repository with the
// user's own gate: its test made fixture/ a repository, lemmings committed
// it as a gitlink and its next look at the work tree ran the filter.
func TestAModelsNestedRepositoryIsNeitherCommittedNorEntered(t *testing.T) {
	requireSandbox(t)
	marker := filepath.Join(t.TempDir(), "ran")
	repo := prepared(t)
	impl := writerImplementor("fixture_test.go", fixtureTest(marker))
	r := runWith(t, repo, planFor(t, "fixture_test.go"), &impl, "gates:\n  - {name: test, command: go test -count=1 -run TestFixture ./...}\n")
	noMarker(t, marker)
	res := lastJSON(t, r.stdout)
	if res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	branch := res["branch"].(string)
	if got := git(t, repo, "show", branch+":fixture_test.go"); !strings.Contains(got, "TestFixture") {
		t.Fatalf("the test was not committed:\n%s", got)
	}
	if tree := git(t, repo, "ls-tree", "-r", branch); strings.Contains(tree, "160000") {
		t.Errorf("the model's repository was committed as a gitlink:\n%s", tree)
	}
}

// hostileExercise writes a Python exercise of a benchmark checkout whose
// reference solution runs example (and fails its test), and the checkout's
// top-level pytest.py, which writes marker.
func hostileExercise(t *testing.T, example, marker string) (checkout, exercise string) {
	t.Helper()
	checkout = filepath.Join(t.TempDir(), "benchmark")
	exercise = filepath.Join(checkout, "python", "exercises", "practice", "leap")
	writeFile(t, filepath.Join(checkout, "pytest.py"), fmt.Sprintf("import os\nwith open(%q, 'w') as f:\n    f.write('ran in ' + os.getcwd() + '\\n' + repr(dict(os.environ)))\n", marker))
	writeFile(t, filepath.Join(exercise, ".docs", "instructions.md"), "# Leap\n\nSay whether a year is a leap year.\n")
	writeFile(t, filepath.Join(exercise, ".meta", "config.json"), `{"files": {"solution": ["leap.py"], "test": ["leap_test.py"], "example": [".meta/example.py"]}}`)
	writeFile(t, filepath.Join(exercise, "leap.py"), "def leap_year(year):\n    pass\n")
	writeFile(t, filepath.Join(exercise, "leap_test.py"), "import unittest\n\nfrom leap import leap_year\n\n\nclass LeapTest(unittest.TestCase):\n    def test_2000(self):\n        self.assertIs(leap_year(2000), True)\n")
	writeFile(t, filepath.Join(exercise, ".meta", "example.py"), example)
	return checkout, exercise
}

// 4. lemmings eval checked for pytest with python3 -m pytest --version in
// the current folder, outside the sandbox: -m put the folder on the import
// path, and a benchmark checkout's top-level pytest.py ran with the keys.
func TestEvalsToolchainCheckImportsNothingFromTheCurrentFolder(t *testing.T) {
	if err := exec.Command("python3", "-m", "pytest", "--version").Run(); err != nil {
		t.Skip("no pytest here")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	checkout, _ := hostileExercise(t, "def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n", marker)
	c := newCLI(t, canaryEnv(t)...)
	r := c.run(checkout, "--json", "eval", "--oracle", "--out", filepath.Join(t.TempDir(), "out"), "python")
	noMarker(t, marker)
	if sum := evalLine(t, r.stdout); sum["scored"] != 1.0 || sum["pass1_rate"] != 100.0 {
		t.Errorf("exit %d, summary %v\nstderr:\n%s", r.code, sum, r.stderr)
	}
}

// 5. A solution whose tests copy /bin/sh and make it setuid left a setuid
// shell in eval's work folder (kept, 0755, for a failed exercise): any local
// user ran it as lemmings' user (root in the probe: euid=0).
func TestNoSetuidFileSurvivesASandboxedCommand(t *testing.T) {
	requireSandbox(t)
	if err := exec.Command("python3", "-m", "pytest", "--version").Run(); err != nil {
		t.Skip("no pytest here")
	}
	example := `import os, shutil, stat

for name, mode in [("suidsh", 0o4755), ("sgidsh", 0o2755)]:
    try:
        shutil.copy("/bin/sh", name)
        os.chmod(name, mode)
    except OSError:
        pass
    try:
        fd = os.open("created-" + name, os.O_CREAT | os.O_WRONLY, mode)
        os.close(fd)
    except OSError:
        pass


def leap_year(year):
    return None
`
	checkout, _ := hostileExercise(t, example, filepath.Join(t.TempDir(), "unused"))
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, canaryEnv(t)...)
	r := c.run(t.TempDir(), "--json", "eval", "--oracle", "--out", out, filepath.Join(checkout, "python"))
	if sum := evalLine(t, r.stdout); sum["scored"] != 1.0 || sum["pass1_rate"] != 0.0 {
		t.Fatalf("exit %d, summary %v\nstderr:\n%s", r.code, sum, r.stderr)
	}
	var work string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			t.Errorf("%s is %v", p, fi.Mode())
		}
		if d.IsDir() && d.Name() == "work" {
			work = p
		}
		return nil
	})
	must(t, err)
	if work == "" {
		t.Fatal("no work folder was kept for the failed exercise")
	}
	if fi, err := os.Stat(work); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the work folder %s is %v, want private (0700)", work, fi.Mode())
	}
}

// 6. The sandbox's caches were keyed by the repository's path: what a gate of
// a deleted repository planted there reached another repository cloned
// later at the same path.
func TestACacheAGateWroteIsNeverReadByAnotherRepository(t *testing.T) {
	requireSandbox(t)
	cache, tools := t.TempDir(), t.TempDir()
	repo := prepared(t)
	plant, check := filepath.Join(tools, "plant.sh"), filepath.Join(tools, "check.sh")
	writeFile(t, plant, "#!/bin/sh\necho planted > \"$XDG_CACHE_HOME/planted\"\necho planted > \"$GOMODCACHE/planted\"\n")
	writeFile(t, check, "#!/bin/sh\nif test -e \"$XDG_CACHE_HOME/planted\" || test -e \"$GOMODCACHE/planted\"; then\n  echo found what another repository planted\n  exit 1\nfi\n")
	extra := "sandbox:\n  cache_dir: " + cache + "\n"
	r := runWith(t, repo, demoPlan(t), nil, extra+"gates:\n  - {name: plant, command: sh "+plant+"}\n")
	if res := lastJSON(t, r.stdout); res["outcome"] != "done" {
		t.Fatalf("the planting run: exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	planted := 0
	_ = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "planted" {
			planted++
		}
		return nil
	})
	if planted == 0 {
		t.Fatal("the first repository's gate planted nothing in the caches: the test does not test")
	}
	// The repository is deleted; another is cloned at the same path.
	must(t, os.RemoveAll(repo))
	if err := demo.PrepareRepo(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	r = runWith(t, repo, demoPlan(t), nil, extra+"gates:\n  - {name: check, command: sh "+check+"}\n")
	if res := lastJSON(t, r.stdout); res["outcome"] != "done" {
		t.Errorf("the second repository's gate saw the first's cache: exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
}

// 13. lemmings' own go env ran in the repository, outside the sandbox: a
// go.mod asking for go 1.99.0, with GOTOOLCHAIN=auto, made it fetch a
// toolchain from the configured proxy.
func TestLemmingsOwnGoEnvFetchesNoToolchain(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	var mu sync.Mutex
	var asked []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		asked = append(asked, req.URL.Path)
		mu.Unlock()
		http.NotFound(w, req)
	}))
	t.Cleanup(proxy.Close)
	repo := prepared(t)
	commitFiles(t, repo, map[string]string{"go.mod": "module example.com/textstats\n\ngo 1.99.0\n"})
	r := runWith(t, repo, demoPlan(t), nil, "gates:\n  - {name: test, command: \"true\"}\n",
		"GOTOOLCHAIN=auto", "GOPROXY="+proxy.URL, "GOSUMDB=off")
	if !strings.Contains(r.stdout, `"kind":"result"`) {
		t.Fatalf("exit %d, no result:\n%s", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) > 0 {
		t.Errorf("lemmings' go asked the proxy for %v", asked)
	}
}
