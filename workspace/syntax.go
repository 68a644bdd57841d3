package workspace

import (
	"context"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/sandbox"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// SyntaxTimeout bounds one syntax check command.
const SyntaxTimeout = 90 * time.Second

// DefaultSyntaxChecks are the commands run after an edit, by file extension.
// {file} is the edited file and {dir} its directory, both relative to the
// work tree and shell-quoted. Go files are parsed in-process first (what
// `gofmt -e` reports); the command then vets the package. Python byte code
// goes to the sandbox's temp dir, outside the work tree.
func DefaultSyntaxChecks() map[string]string {
	return map[string]string{
		".go":  "go vet ./{dir}",
		".py":  `PYTHONPYCACHEPREFIX="${TMPDIR:-/tmp}/pycache" python3 -m py_compile {file}`,
		".js":  "node --check {file}",
		".mjs": "node --check {file}",
		".cjs": "node --check {file}",
	}
}

// CheckSyntax runs the fast checks of the edited files in root: Go files are
// parsed, then each check command runs once per file ({file}) or once per
// directory ({dir} only), confined by box as a gate is. It returns the
// problems summarised within about maxBytes, "" when all is well. A check
// whose tool is missing (exit 127) is skipped: it says nothing about the
// code.
func CheckSyntax(ctx context.Context, box *sandbox.Box, root string, files []string, checks map[string]string, maxBytes int) string {
	return RunChecks(ctx, box, root, files, checks).Introduced(Checks{}, root, maxBytes)
}

// Checks is what the fast checks said of some files: the Go files that do
// not parse, and the output of each check command that failed.
type Checks struct {
	Parse  map[string]string // file → its parse errors
	Failed map[string]string // command → its output
	Ran    []string          // the commands run (and the files parsed), in order
}

// CheckCommands are the check commands the files need, in order, each once.
func CheckCommands(files []string, checks map[string]string) []string {
	var out []string
	sorted := append([]string(nil), files...)
	sort.Strings(sorted)
	for _, f := range sorted {
		cmd := checks[strings.ToLower(path.Ext(f))]
		if cmd == "" {
			continue
		}
		dir := path.Dir(f)
		cmd = strings.ReplaceAll(cmd, "{file}", shellQuote(f))
		cmd = strings.ReplaceAll(cmd, "./{dir}", shellQuote("./"+dir))
		cmd = strings.ReplaceAll(cmd, "{dir}", shellQuote(dir))
		if !slices.Contains(out, cmd) {
			out = append(out, cmd)
		}
	}
	return out
}

// RunChecks parses the Go files among files and runs the check commands they
// need (CheckCommands). A Go file that does not parse skips the command of
// its extension: vet would only repeat the parse error. The commands run
// confined by box, as gates do.
func RunChecks(ctx context.Context, box *sandbox.Box, root string, files []string, checks map[string]string) Checks {
	c := Checks{Parse: map[string]string{}, Failed: map[string]string{}}
	skip := map[string]bool{}
	for _, f := range files {
		if strings.ToLower(path.Ext(f)) != ".go" {
			continue
		}
		if msg := parseGo(root, f); msg != "" {
			c.Parse[f] = msg
			for _, cmd := range CheckCommands([]string{f}, checks) {
				skip[cmd] = true
			}
		}
	}
	for _, cmd := range CheckCommands(files, checks) {
		if skip[cmd] {
			continue
		}
		c.Ran = append(c.Ran, cmd)
		if out, failed := RunCheckCommand(ctx, box, root, cmd); failed {
			c.Failed[cmd] = out
		}
	}
	return c
}

// RunCheckCommand runs one check command in root, confined by box: the one
// place a check's process starts. failed is false when it passed, or its
// tool is missing (exit 127) or it was cancelled: then it says nothing about
// the code.
func RunCheckCommand(ctx context.Context, box *sandbox.Box, root, cmd string) (output string, failed bool) {
	r := RunGate(ctx, box, root, Gate{Name: "syntax", Command: cmd, Timeout: SyntaxTimeout}, 64<<10)
	if r.Passed || r.ExitCode == 127 || r.Canceled {
		return "", false
	}
	return r.Output, true
}

// Introduced says what after has that base had not, summarised within about
// maxBytes ("" when nothing is new): files that parsed before and do not
// now, and the findings of each failed command not found before. Findings
// are compared by file and message, not line, so code moved by the edit
// does not make an old finding new; a failed command whose output has no
// located finding is new unless base failed with the same output.
func (after Checks) Introduced(base Checks, root string, maxBytes int) string {
	var problems []string
	for _, f := range slices.Sorted(maps.Keys(after.Parse)) {
		if _, was := base.Parse[f]; !was {
			problems = append(problems, after.Parse[f])
		}
	}
	for _, cmd := range slices.Sorted(maps.Keys(after.Failed)) {
		out := after.Failed[cmd]
		old, wasFailing := base.Failed[cmd]
		if !wasFailing {
			problems = append(problems, fmt.Sprintf("`%s` failed:\n%s", cmd, SummarizeGateOutput(out, root, maxBytes)))
			continue
		}
		now := ParseDiagnostics(out, root)
		if len(now) == 0 {
			if strings.TrimSpace(old) != strings.TrimSpace(out) {
				problems = append(problems, fmt.Sprintf("`%s` failed:\n%s", cmd, SummarizeGateOutput(out, root, maxBytes)))
			}
			continue
		}
		seen := map[string]int{}
		for _, d := range ParseDiagnostics(old, root) {
			seen[d.Path+"\x00"+d.Message]++
		}
		var fresh []string
		for _, d := range now {
			k := d.Path + "\x00" + d.Message
			if seen[k] > 0 {
				seen[k]--
				continue
			}
			fresh = append(fresh, d.String())
		}
		if len(fresh) > 0 {
			problems = append(problems, fmt.Sprintf("`%s` reports:\n%s", cmd, SummarizeGateOutput(strings.Join(fresh, "\n"), root, maxBytes)))
		}
	}
	out := strings.Join(problems, "\n")
	if maxBytes > 0 && len(out) > maxBytes+256 {
		out = out[:maxBytes] + "\n[…]"
	}
	return out
}

// parseGo reports the syntax errors of a Go file as gofmt -e does, each with
// its line of source.
func parseGo(root, rel string) string {
	src, err := safefile.ReadFileUnder(root, filepath.FromSlash(rel))
	if err != nil {
		return ""
	}
	_, err = parser.ParseFile(token.NewFileSet(), rel, src, parser.AllErrors|parser.SkipObjectResolution)
	if err == nil {
		return ""
	}
	var b strings.Builder
	if list, ok := err.(scanner.ErrorList); ok {
		for i, e := range list {
			if i == 10 {
				fmt.Fprintf(&b, "(%d more)\n", len(list)-10)
				break
			}
			b.WriteString(e.Error())
			b.WriteByte('\n')
		}
	} else {
		b.WriteString(err.Error() + "\n")
	}
	out := b.String()
	return strings.TrimRight(SummarizeGateOutput(out, root, 1024), "\n")
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
