package workspace

import (
	"context"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/sandbox"
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
	var problems []string
	ran := map[string]bool{}
	sorted := append([]string(nil), files...)
	sort.Strings(sorted)
	for _, f := range sorted {
		ext := strings.ToLower(path.Ext(f))
		if ext == ".go" {
			if msg := parseGo(root, f); msg != "" {
				problems = append(problems, msg)
				continue // vet would only repeat the parse error
			}
		}
		cmd := checks[ext]
		if cmd == "" {
			continue
		}
		dir := path.Dir(f)
		cmd = strings.ReplaceAll(cmd, "{file}", shellQuote(f))
		cmd = strings.ReplaceAll(cmd, "./{dir}", shellQuote("./"+dir))
		cmd = strings.ReplaceAll(cmd, "{dir}", shellQuote(dir))
		if ran[cmd] {
			continue
		}
		ran[cmd] = true
		r := RunGate(ctx, box, root, Gate{Name: "syntax", Command: cmd, Timeout: SyntaxTimeout}, 64<<10)
		if r.Passed || r.ExitCode == 127 || r.Canceled {
			continue
		}
		problems = append(problems, fmt.Sprintf("`%s` failed:\n%s", cmd, SummarizeGateOutput(r.Output, root, maxBytes)))
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
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
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
