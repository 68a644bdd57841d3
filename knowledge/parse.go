package knowledge

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// MaxRulesChars is the longest a Rules section may be: rules are read in every
// planning prompt, so they stay short (docs/knowledge.md, "Document format").
const MaxRulesChars = 500

type secKind int

const (
	secOther secKind = iota
	secRules
	secExamples
	secRationale
	secChangelog
)

type rawSection struct {
	heading       string
	kind          secKind
	start, end    int // line indexes: heading line, one past the last body line
	unclosedFence bool
}

type metaLine struct {
	key   string // lower case
	value string
	idx   int // line index
}

var (
	reH1        = regexp.MustCompile(`^ {0,3}# +(.*?)(?:\s+#+)?\s*$`)
	reH2        = regexp.MustCompile(`^ {0,3}## +(.*?)(?:\s+#+)?\s*$`)
	reBadHead   = regexp.MustCompile(`^ {0,3}#{1,6}[A-Za-z]`)
	reSetext    = regexp.MustCompile(`^ {0,3}=+\s*$`)
	reMeta      = regexp.MustCompile(`^\s*([_*])([A-Za-z][A-Za-z -]*?)\s*:\s*(.*?)([_*])\s*$`)
	reFence     = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	reListItem  = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,9}[.)])\s+`)
	reBulletRow = regexp.MustCompile(`^\s*[-*+]\s+(.*)$`)
	reChange    = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})\s+(\S+?)(?:\s+after\s+(\S+?))?(?:\s+\(milestone\s+([^)]*)\))?\s*:\s*(.*)$`)
)

// Parse reads one document. path is relative to the knowledge dir. It never
// fails: whatever it cannot understand is kept as written and reported as a
// Problem with its line.
func Parse(p string, data []byte) (*Doc, []Problem) {
	p = path.Clean(strings.ReplaceAll(p, "\\", "/"))
	d := &Doc{Path: p, raw: append([]byte(nil), data...), titleAt: -1, eol: "\n"}
	if i := strings.IndexByte(p, '/'); i > 0 {
		d.Category = p[:i]
	}
	var probs []Problem
	add := func(line int, format string, args ...any) {
		probs = append(probs, Problem{File: p, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	if !utf8.Valid(data) {
		add(0, "file is not valid UTF-8")
	}

	text := string(data)
	d.finalEOL = strings.HasSuffix(text, "\n")
	if len(text) > 0 {
		d.lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	if len(d.lines) > 0 && strings.HasSuffix(d.lines[0], "\r") {
		d.eol = "\r\n"
	}

	from := skipFrontMatter(d.lines, add)
	headerFrom := from
	d.headerTo = len(d.lines)
	var fc fence
	var cur *rawSection
	seen := map[secKind]bool{}
	for i := from; i < len(d.lines); i++ {
		l := strings.TrimSuffix(d.lines[i], "\r")
		if fc.code(l, i) {
			continue
		}
		if m := reH2.FindStringSubmatch(l); m != nil {
			if cur != nil {
				cur.end = i
				d.sections = append(d.sections, *cur)
			} else {
				d.headerTo = i
			}
			k := sectionKind(m[1])
			if k != secOther && seen[k] {
				add(i+1, "second %q section; only the first one is read", m[1])
				k = secOther
			}
			seen[k] = true
			cur = &rawSection{heading: m[1], kind: k, start: i}
			continue
		}
		if m := reH1.FindStringSubmatch(l); m != nil {
			if d.titleAt < 0 && cur == nil {
				d.titleAt = i
				d.Title = m[1]
				headerFrom = i + 1
			} else {
				add(i+1, "more than one title (# heading); use ## for sections")
			}
			continue
		}
		if reBadHead.MatchString(l) {
			add(i+1, "malformed heading %q: put a space after the #", textutil.Clip(l, 40))
		}
		if reSetext.MatchString(l) && i > from && strings.TrimSpace(d.lines[i-1]) != "" && d.titleAt < 0 {
			add(i+1, "underlined heading: write the title as '# Title'")
		}
	}
	if cur != nil {
		cur.end = len(d.lines)
		cur.unclosedFence = fc.mark != ""
		d.sections = append(d.sections, *cur)
	}
	if fc.mark != "" {
		add(fc.line+1, "code fence opened here is never closed")
	}
	d.parseHeader(headerFrom, add)
	d.parseSections(add)
	d.orig = d.fields()

	titleLine := d.titleAt + 1
	if d.titleAt < 0 {
		add(1, "missing title: the first heading must be '# Title'")
		titleLine = 1
	}
	if d.Status == "" {
		add(titleLine, "missing status line: add '_Status: established_' (or provisional, deprecated) under the title")
	} else if !Status(strings.ToLower(strings.TrimSpace(string(d.Status)))).Valid() {
		add(d.metaLineNo("status"), "invalid status %q: want established, provisional or deprecated", string(d.Status))
	}
	if n := utf8.RuneCountInString(d.Rules); n > MaxRulesChars {
		add(d.sectionLineNo(secRules), "rules section is %d characters; keep it at %d or fewer (one concern per doc)", n, MaxRulesChars)
	}
	return d, probs
}

// headerFromIndex is where metadata lines may start: after the title, or after
// any front matter when there is no title.
func (d *Doc) headerFromIndex() int {
	if d.titleAt >= 0 {
		return d.titleAt + 1
	}
	return skipFrontMatter(d.lines, func(int, string, ...any) {})
}

// skipFrontMatter returns the first line after a YAML front matter block,
// reporting it: lemmings reads metadata from the italic lines only.
func skipFrontMatter(lines []string, add func(int, string, ...any)) int {
	if len(lines) == 0 || strings.TrimSuffix(lines[0], "\r") != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		l := strings.TrimSuffix(lines[i], "\r")
		if l == "---" || l == "..." {
			add(1, "YAML front matter is not read: write metadata as '_Status: …_' lines under the title")
			return i + 1
		}
	}
	add(1, "front matter opened here is never closed (no closing '---')")
	return 1
}

func closesFence(l, mark string) bool {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return false
	}
	t = strings.TrimRight(t, " \t")
	return len(t) >= len(mark) && strings.Trim(t, mark[:1]) == ""
}

func sectionKind(h string) secKind {
	switch strings.ToLower(strings.TrimSpace(h)) {
	case "rules":
		return secRules
	case "examples", "example":
		return secExamples
	case "rationale":
		return secRationale
	case "changelog", "change log":
		return secChangelog
	}
	return secOther
}

// fence follows fenced code blocks while a document's lines are read in
// order: what is inside one is code, never a heading or a metadata line.
type fence struct {
	mark string // the open fence's marker; "" outside one
	line int    // the line it opened on
}

// code reports whether line l (number i) belongs to a fenced block: its
// opening line, its inside or its closing line.
func (f *fence) code(l string, i int) bool {
	if f.mark != "" {
		if closesFence(l, f.mark) {
			f.mark = ""
		}
		return true
	}
	if m := reFence.FindStringSubmatch(l); m != nil {
		f.mark, f.line = m[1], i
		return true
	}
	return false
}

func (d *Doc) parseHeader(from int, add func(int, string, ...any)) {
	var fc fence
	for i := from; i < d.headerTo; i++ {
		l := strings.TrimSuffix(d.lines[i], "\r")
		if fc.code(l, i) {
			continue
		}
		if i == d.titleAt {
			continue
		}
		m := reMeta.FindStringSubmatch(l)
		if m == nil || m[1] != m[4] {
			low := strings.ToLower(l)
			t := strings.TrimSpace(l)
			if (strings.HasPrefix(t, "_") || strings.HasPrefix(t, "*")) &&
				(strings.Contains(low, "status") || strings.Contains(low, "last updated") || strings.Contains(low, "themes")) {
				add(i+1, "malformed metadata line %q: write it as '_Key: value_'", textutil.Clip(t, 50))
			}
			continue
		}
		key := strings.ToLower(strings.Join(strings.Fields(m[2]), " "))
		if d.metaIndex(key) >= 0 {
			if key == "status" || key == "last updated by" || key == "themes" {
				add(i+1, "second %q line; only the first one is read", m[2])
			}
			continue
		}
		d.meta = append(d.meta, metaLine{key: key, value: m[3], idx: i})
		switch key {
		case "last updated by":
			w, t, _ := strings.Cut(m[3], ",")
			d.UpdatedBy, d.SourceTask = strings.TrimSpace(w), strings.TrimSpace(t)
		case "status":
			d.Status = Status(strings.TrimSpace(m[3]))
		case "themes":
			d.Themes = splitList(m[3])
		}
	}
}

func (d *Doc) parseSections(add func(int, string, ...any)) {
	for _, s := range d.sections {
		body := normBody(d.lines[s.start+1 : s.end])
		switch s.kind {
		case secRules:
			d.Rules = body
		case secExamples:
			d.Examples = body
		case secRationale:
			d.Rationale = body
		case secChangelog:
			d.Changelog = d.parseChangelog(s, add)
		}
	}
}

// parseChangelog reads bullet entries "- YYYY-MM-DD writer after task
// (milestone M): summary"; indented continuation lines extend the summary.
func (d *Doc) parseChangelog(s rawSection, add func(int, string, ...any)) []Change {
	var out []Change
	type item struct {
		text string
		line int
	}
	var items []item
	for i := s.start + 1; i < s.end; i++ {
		l := strings.TrimSuffix(d.lines[i], "\r")
		if m := reBulletRow.FindStringSubmatch(l); m != nil && len(l)-len(strings.TrimLeft(l, " ")) < 2 {
			items = append(items, item{text: strings.TrimSpace(m[1]), line: i})
			continue
		}
		if strings.TrimSpace(l) != "" && len(items) > 0 {
			items[len(items)-1].text += " " + strings.TrimSpace(l)
		}
	}
	for _, it := range items {
		c, ok := parseChange(it.text)
		if !ok {
			add(it.line+1, "changelog entry not in the form '- YYYY-MM-DD writer after task (milestone M): summary'")
		}
		out = append(out, c)
	}
	return out
}

func parseChange(text string) (Change, bool) {
	m := reChange.FindStringSubmatch(text)
	if m == nil {
		return Change{Summary: text}, false
	}
	return Change{Date: m[1], Writer: Writer(m[2]), Task: m[3], Milestone: strings.TrimSpace(m[4]), Summary: strings.TrimSpace(m[5])}, true
}

func (d *Doc) metaIndex(key string) int {
	for i, m := range d.meta {
		if m.key == key {
			return i
		}
	}
	return -1
}

func (d *Doc) metaLineNo(key string) int {
	if i := d.metaIndex(key); i >= 0 {
		return d.meta[i].idx + 1
	}
	return d.titleAt + 1
}

func (d *Doc) sectionLineNo(k secKind) int {
	for _, s := range d.sections {
		if s.kind == k {
			return s.start + 1
		}
	}
	return 0
}

// normBody joins section lines with "\n" (whatever the file used) and trims
// blank lines around them, so field values compare equal across line endings.
func normBody(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return trimBlank(strings.Join(out, "\n"))
}

// trimBlank removes leading and trailing blank lines and trailing spaces of the
// last line, keeping the indentation of the first line.
func trimBlank(s string) string {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func splitList(s string) []string {
	out := []string{}
	for _, part := range strings.Split(s, ",") {
		if t := strings.TrimSpace(part); t != "" {
			out = append(out, t)
		}
	}
	return out
}
