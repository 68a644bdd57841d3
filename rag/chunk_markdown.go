package rag

import (
	"regexp"
	"strings"

	"github.com/tmc/langchaingo/textsplitter"
)

var (
	reMDHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$`)
	reMDFence   = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	reMDMarker  = regexp.MustCompile(`^\s*(?:[-*+>]|\d{1,9}[.)]|\|)\s*`)
)

// chunkMarkdown splits Markdown by headings: each section (a heading and its
// text up to the next heading) is a chunk whose context is the heading path
// ("Install > From source"). YAML front matter is skipped. A section too big
// for one chunk is split by langchaingo's Markdown splitter, which keeps code
// fences and tables whole; its pieces get the lines they were found at.
func chunkMarkdown(text string) []chunk {
	lines := splitLines(text)
	from := 0
	if len(lines) > 0 && lines[0] == "---" {
		for i := 1; i < len(lines); i++ {
			if lines[i] == "---" || lines[i] == "..." {
				from = i + 1
				break
			}
		}
	}
	type section struct {
		start, end int // 0-based line indexes, end exclusive
		context    string
	}
	var secs []section
	var stack []string // heading titles by level-1
	cur := section{start: from, context: ""}
	fence := ""
	for i := from; i < len(lines); i++ {
		l := lines[i]
		if fence != "" {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if m := reMDFence.FindStringSubmatch(l); m != nil {
			fence = m[1]
			continue
		}
		m := reMDHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		cur.end = i
		secs = append(secs, cur)
		level := len(m[1])
		for len(stack) < level {
			stack = append(stack, "")
		}
		stack = append(stack[:level-1], strings.TrimSpace(m[2]))
		var path []string
		for _, h := range stack {
			if h != "" {
				path = append(path, h)
			}
		}
		cur = section{start: i, context: strings.Join(path, " > ")}
	}
	cur.end = len(lines)
	secs = append(secs, cur)

	var out []chunk
	carry := -1 // start of a heading-only section waiting for its body
	for _, s := range secs {
		start := s.start
		if carry >= 0 {
			start = carry
			carry = -1
		}
		body := lines[start:s.end]
		if strings.TrimSpace(strings.Join(lines[s.start:s.end], "\n")) == "" {
			continue
		}
		if s.end-s.start == 1 && reMDHeading.MatchString(lines[s.start]) {
			carry = start // a heading directly followed by a sub-heading
			continue
		}
		text := strings.Join(body, "\n")
		if len(text) > maxChunkChars || len(body) > maxChunkLines*2 {
			out = append(out, splitSection(body, start, s.context)...)
			continue
		}
		// Small neighbours (a title with its status lines, a short
		// section) share a chunk, like small Go declarations.
		if n := len(out); n > 0 && len(out[n-1].Text) < mergeBelow && len(text) < mergeBelow && out[n-1].EndLine == start {
			out[n-1].Text = strings.Join(lines[out[n-1].StartLine-1:s.end], "\n")
			out[n-1].EndLine = s.end
			continue
		}
		out = append(out, chunk{StartLine: start + 1, EndLine: s.end, Context: s.context, Text: text})
	}
	if carry >= 0 {
		out = append(out, chunk{StartLine: carry + 1, EndLine: len(lines), Context: "", Text: strings.Join(lines[carry:], "\n")})
	}
	return out
}

// splitSection cuts one long section with langchaingo's Markdown splitter and
// locates each piece in the section's lines (first is the section's 0-based
// line index). Pieces that cannot be located take the lines after the last one
// found.
func splitSection(body []string, first int, context string) []chunk {
	sp := textsplitter.NewMarkdownTextSplitter(
		textsplitter.WithChunkSize(maxChunkChars),
		textsplitter.WithChunkOverlap(200),
		textsplitter.WithCodeBlocks(true),
		textsplitter.WithJoinTableRows(true),
		textsplitter.WithHeadingHierarchy(true),
	)
	pieces, err := sp.SplitText(strings.Join(body, "\n"))
	if err != nil || len(pieces) == 0 {
		return chunkLines(body, first+1, context)
	}
	norm := make([]string, len(body))
	for i, l := range body {
		norm[i] = normLine(l)
	}
	var out []chunk
	cursor := 0
	for _, p := range pieces {
		start, end, pos := -1, -1, cursor
		for _, pl := range strings.Split(p, "\n") {
			probe := normLine(pl)
			if len(probe) > 40 {
				probe = probe[:40]
			}
			if len(probe) < 4 || reMDHeading.MatchString(pl) {
				continue
			}
			for i := pos; i < len(body); i++ {
				if strings.Contains(norm[i], probe) {
					if start < 0 {
						start = i
					}
					end, pos = i, i
					break
				}
			}
		}
		if start < 0 {
			start, end = min(cursor, len(body)-1), min(cursor, len(body)-1)
		}
		end = max(end, start)
		out = append(out, chunk{StartLine: first + start + 1, EndLine: first + end + 1, Context: context, Text: p})
		cursor = start
	}
	return out
}

// normLine reduces a line to comparable text: no list or quote markers, no
// emphasis, single spaces.
func normLine(l string) string {
	l = reMDMarker.ReplaceAllString(l, "")
	l = strings.NewReplacer("*", "", "_", "", "`", "", "|", " ").Replace(l)
	return strings.Join(strings.Fields(l), " ")
}
