package workspace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// Default time limits of detected gates.
const (
	DefaultBuildTimeout = 5 * time.Minute
	DefaultTestTimeout  = 10 * time.Minute
	// DefaultGateTimeout applies to a gate given without a timeout.
	DefaultGateTimeout = 10 * time.Minute
)

// Gate is a command whose success the work must keep: build, vet, test…
// It runs with `sh -c` in the worktree, in the sandbox.
type Gate struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Timeout time.Duration `json:"timeout"` // 0: DefaultGateTimeout
	// Network lets the gate reach the network (the sandbox takes it away
	// from every other).
	Network bool `json:"network,omitempty"`
}

// The placeholder `npm init` writes, which always fails.
const npmNoTest = `echo "Error: no test specified" && exit 1`

var makeTestTarget = regexp.MustCompile(`(?m)^test\s*:([^=]|$)`)

// DetectGates proposes gates from the project files at root, builds before
// tests: go.mod → go build, go vet, go test; package.json with a real test
// script → npm test; pyproject.toml, setup.py or setup.cfg → pytest;
// Cargo.toml → cargo test; and, only when nothing else was found, a
// Makefile with a test target → make test. Several ecosystems give several
// gates; a repeated name gets the tool as suffix ("test-npm").
func DetectGates(root string) []Gate {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}
	var builds, tests []Gate
	if exists("go.mod") {
		builds = append(builds,
			Gate{Name: "build", Command: "go build ./...", Timeout: DefaultBuildTimeout},
			Gate{Name: "vet", Command: "go vet ./...", Timeout: DefaultBuildTimeout})
		tests = append(tests, Gate{Name: "test", Command: "go test ./...", Timeout: DefaultTestTimeout})
	}
	if hasNpmTest(filepath.Join(root, "package.json")) {
		tests = append(tests, Gate{Name: "test-npm", Command: "npm test", Timeout: DefaultTestTimeout})
	}
	if exists("pyproject.toml") || exists("setup.py") || exists("setup.cfg") {
		tests = append(tests, Gate{Name: "test-pytest", Command: "pytest", Timeout: DefaultTestTimeout})
	}
	if exists("Cargo.toml") {
		tests = append(tests, Gate{Name: "test-cargo", Command: "cargo test", Timeout: DefaultTestTimeout})
	}
	if len(builds) == 0 && len(tests) == 0 && hasMakeTest(root) {
		tests = append(tests, Gate{Name: "test-make", Command: "make test", Timeout: DefaultTestTimeout})
	}
	gates := append(builds, tests...)
	// The first gate called test needs no suffix.
	taken := map[string]bool{}
	for _, g := range gates {
		taken[g.Name] = true
	}
	for i, g := range gates {
		if strings.HasPrefix(g.Name, "test-") && !taken["test"] {
			gates[i].Name = "test"
			taken["test"] = true
		}
	}
	return gates
}

func hasNpmTest(file string) bool {
	data, err := safefile.ReadFileUnder(filepath.Dir(file), filepath.Base(file))
	if err != nil {
		return false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return false
	}
	t := strings.TrimSpace(pkg.Scripts["test"])
	return t != "" && t != npmNoTest
}

func hasMakeTest(root string) bool {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		data, err := safefile.ReadFileUnder(root, name)
		if err == nil && makeTestTarget.Match(data) {
			return true
		}
	}
	return false
}
