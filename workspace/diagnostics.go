package workspace

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// DefaultSummaryBytes is the size a gate's output is summarised to for a model.
const DefaultSummaryBytes = 2048

// Diagnostic is one located problem in a tool's output.
type Diagnostic struct {
	Path    string // relative to the gate's directory when it lies inside it
	Line    int
	Col     int // 0: not given
	Message string
}

func (d Diagnostic) String() string {
	loc := d.Path + ":" + strconv.Itoa(d.Line)
	if d.Col > 0 {
		loc += ":" + strconv.Itoa(d.Col)
	}
	if d.Message == "" {
		return loc
	}
	return loc + ": " + d.Message
}

var (
	ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	// file:line[:col]: message (Go build/vet/test, pytest, generic) and
	// tsc --pretty's "file:line:col - error …".
	diagColon = regexp.MustCompile(`^\s*(?:vet: )?([^\s:()"'<>|]+\.[A-Za-z0-9]+):(\d+)(?::(\d+))?(?:(?::| -)\s*(.*))?$`)
	// tsc: file(line,col): error TS…
	diagParen = regexp.MustCompile(`^\s*([^\s()"'<>|]+\.[A-Za-z0-9]+)\((\d+),(\d+)\):\s*(.*)$`)
	// Python traceback frame.
	diagPyFrame = regexp.MustCompile(`^\s*File "([^"]+)", line (\d+)(?:, in (.+))?`)
	// Rust: "  --> src/lib.rs:3:13", the message on the "error[E…]:" line above.
	diagRustArrow = regexp.MustCompile(`^\s*--> ([^\s:]+):(\d+):(\d+)`)
	rustHeadline  = regexp.MustCompile(`^(error|warning)(\[\w+\])?: (.*)$`)
	// Go stack frame ("\t/abs/file.go:14 +0x1a") and Rust backtrace ("at ./src/lib.rs:12:9").
	diagFrame = regexp.MustCompile(`^\s+(?:at )?(\S+\.[A-Za-z0-9]+):(\d+)(?::(\d+))?(?: \+0x[0-9a-f]+)?$`)
	// ESLint: a file on its own line, then "  line:col  error  message  rule".
	eslintFile = regexp.MustCompile(`^(/\S+|\S+\.[A-Za-z0-9]+)$`)
	eslintItem = regexp.MustCompile(`^\s+(\d+):(\d+)\s+(error|warning)\s+(.*?)\s*$`)

	// Lines that sum a run up: kept after the diagnostics.
	summaryLine = regexp.MustCompile(`^(--- FAIL: |FAIL\b|ok\s|FAILED |SUBFAILED|ERROR |=+ .*\d+ (passed|failed|error)|test result: |error: (could not compile|test failed)|Found \d+ error|✖ \d+ problem|panic: |thread '.*' panicked|assertion|\s+(left|right): |\s*[A-Za-z]*(Error|Exception): |E\s{3,})`)
)

// ParseDiagnostics finds the file:line[:col] problems in a tool's output: Go
// build, vet and test (stack frames too), Python tracebacks and pytest, cargo,
// tsc, ESLint and the generic "file:line: message" form. Paths under dir are
// made relative to it; frames outside dir (the standard library, toolchains)
// are left out. Duplicates are dropped; the order is the output's.
func ParseDiagnostics(output, dir string) []Diagnostic {
	var out []Diagnostic
	seen := map[string]bool{}
	add := func(p, line, col, msg string) {
		rel, ok := relInside(p, dir)
		if !ok {
			return
		}
		d := Diagnostic{Path: rel, Message: strings.TrimSpace(msg)}
		d.Line, _ = strconv.Atoi(line)
		d.Col, _ = strconv.Atoi(col)
		if d.Line <= 0 {
			return
		}
		key := d.String()
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, d)
	}
	rustMsg, eslintPath := "", ""
	for _, raw := range strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n") {
		line := ansiEscape.ReplaceAllString(raw, "")
		if m := rustHeadline.FindStringSubmatch(line); m != nil {
			rustMsg = m[1] + m[2] + ": " + m[3]
			continue
		}
		if m := diagRustArrow.FindStringSubmatch(line); m != nil {
			add(m[1], m[2], m[3], rustMsg)
			continue
		}
		if m := diagPyFrame.FindStringSubmatch(line); m != nil {
			msg := ""
			if m[3] != "" {
				msg = "in " + m[3]
			}
			add(m[1], m[2], "", msg)
			continue
		}
		if m := diagParen.FindStringSubmatch(line); m != nil {
			add(m[1], m[2], m[3], m[4])
			continue
		}
		if m := eslintItem.FindStringSubmatch(line); m != nil && eslintPath != "" {
			add(eslintPath, m[1], m[2], m[3]+": "+m[4])
			continue
		}
		if m := diagFrame.FindStringSubmatch(line); m != nil {
			add(m[1], m[2], m[3], "")
			continue
		}
		if m := diagColon.FindStringSubmatch(line); m != nil {
			add(m[1], m[2], m[3], m[4])
			continue
		}
		if eslintFile.MatchString(strings.TrimSpace(line)) {
			eslintPath = strings.TrimSpace(line)
		}
	}
	return out
}

// relInside makes p relative to dir; an absolute path outside dir is not the
// project's and gives false.
func relInside(p, dir string) (string, bool) {
	p = strings.TrimPrefix(p, "./")
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p)), true
	}
	if dir == "" {
		return "", false
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// SummarizeGateOutput turns a gate's output into what a model can act on
// within about maxBytes (≤ 0: DefaultSummaryBytes): the first problems with
// ±3 lines of their source read from dir, then the lines that sum the run up
// (failed tests, counts, the exception). Output with no located problem is
// cut to its head and tail instead. The full output belongs in the event log.
func SummarizeGateOutput(output, dir string, maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultSummaryBytes
	}
	output = ansiEscape.ReplaceAllString(output, "")
	diags := ParseDiagnostics(output, dir)
	if len(diags) == 0 {
		return headTail(output, maxBytes)
	}
	summary := summaryLines(output, 12)
	src := sourceReader{dir: dir, cache: map[string][]string{}}
	var b strings.Builder
	shown := 0
	var last Diagnostic
	for i, d := range diags {
		if shown == 10 {
			break
		}
		block := d.String() + "\n"
		if shown == 0 || d.Path != last.Path || d.Line < last.Line-3 || d.Line > last.Line+3 {
			block += src.context(d, 3) // a problem near the last one shares its lines
			last = d
		}
		if b.Len()+len(block) > maxBytes*3/4 {
			if i == 0 {
				block = d.String() + "\n" // the first problem always shows
			} else {
				break
			}
		}
		b.WriteString(block)
		shown++
	}
	if shown < len(diags) {
		fmt.Fprintf(&b, "(%d more problems not shown)\n", len(diags)-shown)
	}
	if len(summary) > 0 {
		b.WriteString("---\n")
		for _, l := range summary {
			if b.Len()+len(l)+1 > maxBytes {
				break
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// summaryLines picks at most n lines that sum a run up, in order, once each.
func summaryLines(output string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(output, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if !summaryLine.MatchString(l) || seen[l] {
			continue
		}
		if len(l) > 200 {
			l = l[:200] + "…"
		}
		seen[l] = true
		out = append(out, l)
		if len(out) == n {
			break
		}
	}
	return out
}

// headTail keeps the start (where the first error usually is) and the end
// (where the summary is) of output.
func headTail(output string, maxBytes int) string {
	output = strings.TrimRight(output, "\n")
	if len(output) <= maxBytes {
		return output
	}
	head := cutAtLine(output[:maxBytes/2], true)
	tail := cutAtLine(output[len(output)-maxBytes/2:], false)
	return fmt.Sprintf("%s\n[… %d bytes not shown …]\n%s", head, len(output)-len(head)-len(tail), tail)
}

func cutAtLine(s string, keepStart bool) string {
	if keepStart {
		if i := strings.LastIndexByte(s, '\n'); i > 0 {
			return s[:i]
		}
		return s
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	return s
}

// sourceReader reads the lines around a diagnostic. A bare file name that is
// not at the root (go test prints paths relative to the package) is looked
// for by name in the tree.
type sourceReader struct {
	dir   string
	cache map[string][]string
	names map[string][]string // base name → paths, built on first need
}

func (r *sourceReader) lines(p string) []string {
	if l, ok := r.cache[p]; ok {
		return l
	}
	data, err := safefile.ReadFileUnder(r.dir, filepath.FromSlash(p))
	if err != nil && !strings.Contains(p, "/") {
		if found := r.byName(p); len(found) == 1 {
			data, err = safefile.ReadFileUnder(r.dir, filepath.FromSlash(found[0]))
		}
	}
	var lines []string
	if err == nil {
		lines = strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	}
	r.cache[p] = lines
	return lines
}

func (r *sourceReader) byName(name string) []string {
	if r.names == nil {
		r.names = map[string][]string{}
		count := 0
		_ = filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				switch d.Name() {
				case ".git", "node_modules", "vendor", "target", ".lemmings", "__pycache__":
					return filepath.SkipDir
				}
				return nil
			}
			if count++; count > 20000 {
				return filepath.SkipAll
			}
			if rel, err := filepath.Rel(r.dir, p); err == nil {
				r.names[d.Name()] = append(r.names[d.Name()], filepath.ToSlash(rel))
			}
			return nil
		})
	}
	return r.names[name]
}

// context renders lines d.Line±n, numbered, the problem's line marked.
func (r *sourceReader) context(d Diagnostic, n int) string {
	lines := r.lines(d.Path)
	if d.Line > len(lines) {
		return ""
	}
	var b strings.Builder
	for i := max(1, d.Line-n); i <= min(len(lines), d.Line+n); i++ {
		mark := " "
		if i == d.Line {
			mark = ">"
		}
		text := lines[i-1]
		if len(text) > 160 {
			text = text[:160] + "…"
		}
		fmt.Fprintf(&b, "%s%4d| %s\n", mark, i, text)
	}
	return b.String()
}

// ModelFeedback renders a result for a model: what ran, how it ended, and
// the output summarised (SummarizeGateOutput) against the sources in dir.
func (r GateResult) ModelFeedback(dir string, maxBytes int) string {
	status := r.status("FAILED")
	head := fmt.Sprintf("gate %s (`%s`) %s", r.Name, r.Command, status)
	if r.Passed {
		return head
	}
	out := SummarizeGateOutput(r.Output, dir, maxBytes)
	if strings.TrimSpace(out) == "" {
		out = "(no output)"
	}
	return head + ":\n" + out
}
