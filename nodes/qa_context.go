package nodes

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// The reviewer sees each changed function whole, not only the hunks of the
// diff: a weak reviewer judging three context lines calls correct work wrong
// as often as the reverse.
const (
	// maxSpanLines caps one enclosing block outside Go, where the block is
	// found by indentation rather than by a parser.
	maxSpanLines = 80
	// changedCodeChars caps the whole section; the composer may still drop it.
	changedCodeChars = 24000
)

// lineSpan is an inclusive range of 1-based line numbers.
type lineSpan struct{ from, to int }

var hunkHeader = regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@`)

// changedLines maps each file of a unified diff (its new path) to the lines
// of its new version that the diff added or changed. Deleted files are left
// out: there is no function left to show.
func changedLines(diff string) map[string][]int {
	out := map[string][]int{}
	file, line := "", 0
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			file, line = "", 0
		case strings.HasPrefix(l, "+++ "):
			file, line = "", 0
			if p, ok := strings.CutPrefix(l, "+++ b/"); ok {
				file = p
			}
		case strings.HasPrefix(l, "@@"):
			m := hunkHeader.FindStringSubmatch(l)
			if m == nil {
				file = ""
				continue
			}
			line, _ = strconv.Atoi(m[1])
		case file == "" || line == 0:
		case strings.HasPrefix(l, "+"):
			out[file] = append(out[file], line)
			line++
		case strings.HasPrefix(l, "-"):
			// A removed line: mark where it was, so the code around it is shown.
			out[file] = append(out[file], max(line, 1))
		case strings.HasPrefix(l, `\`): // "\ No newline at end of file"
		default:
			line++
		}
	}
	return out
}

// enclosingSpans returns, per changed line, the block around it: the Go
// declaration (function, method, type, var) for Go files, else the lines
// between the nearest top-level lines (indentation 0) around it.
func enclosingSpans(name, src string, lines []int) []lineSpan {
	var spans []lineSpan
	if strings.HasSuffix(name, ".go") {
		spans = goDeclSpans(src, lines)
	}
	if spans == nil {
		spans = indentSpans(strings.Split(src, "\n"), lines)
	}
	return mergeSpans(spans)
}

func goDeclSpans(src string, lines []int) []lineSpan {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil && f == nil {
		return nil
	}
	var decls []lineSpan
	for _, d := range f.Decls {
		from := fset.Position(d.Pos()).Line
		if doc := declDoc(d); doc != nil {
			from = fset.Position(doc.Pos()).Line
		}
		decls = append(decls, lineSpan{from, fset.Position(d.End()).Line})
	}
	var out []lineSpan
	for _, l := range lines {
		found := false
		for _, d := range decls {
			if l >= d.from && l <= d.to {
				out = append(out, d)
				found = true
				break
			}
		}
		if !found { // imports, the package clause, a comment between functions
			out = append(out, lineSpan{max(l-3, 1), l + 3})
		}
	}
	return out
}

func declDoc(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

// indentSpans finds the block around each line by indentation: up to the
// previous line that starts at column 0 and down to the next one (a closing
// brace or the next definition), within maxSpanLines.
func indentSpans(src []string, lines []int) []lineSpan {
	top := func(i int) bool {
		l := src[i]
		return l != "" && l[0] != ' ' && l[0] != '\t'
	}
	var out []lineSpan
	for _, l := range lines {
		i := min(max(l-1, 0), len(src)-1)
		if i < 0 {
			continue
		}
		from := i
		for from > 0 && !top(from) && i-from < maxSpanLines/2 {
			from--
		}
		to := i
		for to+1 < len(src) && to-i < maxSpanLines/2 {
			to++
			if top(to) {
				if strings.TrimSpace(src[to]) != "" && strings.ContainsAny(src[to][:1], "})]") {
					break // the block's closing line belongs to it
				}
				to--
				break
			}
		}
		out = append(out, lineSpan{from + 1, to + 1})
	}
	return out
}

func mergeSpans(spans []lineSpan) []lineSpan {
	slices.SortFunc(spans, func(a, b lineSpan) int { return a.from - b.from })
	var out []lineSpan
	for _, s := range spans {
		if n := len(out); n > 0 && s.from <= out[n-1].to+1 {
			out[n-1].to = max(out[n-1].to, s.to)
			continue
		}
		out = append(out, s)
	}
	return out
}

// changedCode renders the blocks the diff touches, whole, with line numbers,
// as they are now in the work tree. read returns a file's content; skip says
// whether a file must be left out (binary, or denied to the cloud).
func changedCode(diff string, read func(string) (string, error), skip func(string) bool) string {
	byFile := changedLines(diff)
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		if skip != nil && skip(f) {
			continue
		}
		src, err := read(f)
		if err != nil || strings.IndexByte(src, 0) >= 0 {
			continue
		}
		lines := strings.Split(src, "\n")
		for _, sp := range enclosingSpans(path.Base(f), src, byFile[f]) {
			to := min(sp.to, len(lines))
			if sp.from > to {
				continue
			}
			fmt.Fprintf(&b, "### %s:%d-%d\n", f, sp.from, to)
			for i := sp.from; i <= to; i++ {
				fmt.Fprintf(&b, "%s\n", lines[i-1])
			}
			if b.Len() > changedCodeChars {
				return textutil.ClipTrimmed(strings.TrimSpace(b.String()), changedCodeChars) + "\n(cut: more changed code than the review can show)"
			}
		}
	}
	return strings.TrimSpace(b.String())
}
