package rag

import (
	"fmt"
	"strings"
	"testing"
)

const goSrc = `// Package demo is a demo.
package demo

import (
	"errors"
	"fmt"
)

// ErrNope is returned when nope.
var ErrNope = errors.New("nope")

// Client talks to a server.
type Client struct {
	Addr string
}

// free-floating note about Do

// Do sends a request.
// It retries once.
func (c *Client) Do(x int) error {
	if x < 0 {
		return ErrNope
	}
	if x > 1000 {
		return fmt.Errorf("do %d: too large for this client at %s", x, c.Addr)
	}
	return fmt.Errorf("do %d", x)
}
`

func linesOf(text string, from, to int) string {
	return strings.Join(strings.Split(text, "\n")[from-1:to], "\n")
}

func TestChunkGoByDeclaration(t *testing.T) {
	cs := chunkFile("demo/demo.go", KindCode, goSrc)
	if len(cs) < 2 {
		t.Fatalf("chunks: %+v", cs)
	}
	var do *chunk
	for i := range cs {
		c := &cs[i]
		if c.Path != "demo/demo.go" || c.Language != "go" || c.Kind != KindCode || c.Hash == "" {
			t.Errorf("metadata: %+v", c)
		}
		if got := linesOf(goSrc, c.StartLine, c.EndLine); got != c.Text {
			t.Errorf("chunk %d-%d text is not those lines:\n%q\n%q", c.StartLine, c.EndLine, c.Text, got)
		}
		if strings.Contains(c.Context, "func (*Client).Do") {
			do = c
		}
	}
	if do == nil {
		t.Fatalf("no chunk for Do: %+v", cs)
	}
	if !strings.HasPrefix(do.Text, "// free-floating note about Do\n\n// Do sends a request.") || !strings.HasSuffix(do.Text, "}") {
		t.Errorf("Do chunk lacks its comments or body:\n%s", do.Text)
	}
	if cs[0].StartLine != 1 || !strings.Contains(cs[0].Text, "package demo") {
		t.Errorf("first chunk should start with the package clause: %+v", cs[0])
	}
	// Every line of the file is in some chunk.
	covered := make([]bool, strings.Count(goSrc, "\n")+1)
	for _, c := range cs {
		for l := c.StartLine; l <= c.EndLine; l++ {
			covered[l] = true
		}
	}
	for l, line := range strings.Split(strings.TrimSuffix(goSrc, "\n"), "\n") {
		if !covered[l+1] && strings.TrimSpace(line) != "" {
			t.Errorf("line %d %q in no chunk", l+1, line)
		}
	}
}

func TestChunkGoSplitsLongDeclarations(t *testing.T) {
	var b strings.Builder
	b.WriteString("package big\n\n// Huge does a lot.\nfunc Huge() {\n")
	for i := range 300 {
		fmt.Fprintf(&b, "\tprintln(%d, \"some text to make the line longer than usual\")\n", i)
	}
	b.WriteString("}\n")
	src := b.String()
	cs := chunkFile("big.go", KindCode, src)
	if len(cs) < 4 {
		t.Fatalf("a 300-line function gave %d chunks", len(cs))
	}
	for i, c := range cs {
		if len(c.Text) > maxChunkChars || c.EndLine-c.StartLine+1 > maxChunkLines {
			t.Errorf("chunk %d too big: %d chars, %d lines", i, len(c.Text), c.EndLine-c.StartLine+1)
		}
		if i > 0 && !strings.Contains(c.Context, "func Huge") {
			t.Errorf("piece %d lost the declaration name: %q", i, c.Context)
		}
		if i > 1 && c.StartLine != cs[i-1].EndLine-overlapLines+1 {
			t.Errorf("piece %d starts at %d, previous ends at %d: want %d lines of overlap", i, c.StartLine, cs[i-1].EndLine, overlapLines)
		}
	}
	if cs[len(cs)-1].EndLine != strings.Count(src, "\n") {
		t.Errorf("last piece ends at %d", cs[len(cs)-1].EndLine)
	}
}

func TestChunkGoMergesSmallNeighbours(t *testing.T) {
	var b strings.Builder
	b.WriteString("package consts\n\n")
	for i := range 20 {
		fmt.Fprintf(&b, "const C%d = %d\n\n", i, i)
	}
	cs := chunkFile("c.go", KindCode, b.String())
	if len(cs) > 4 {
		t.Errorf("20 one-line constants gave %d chunks", len(cs))
	}
}

func TestChunkGoThatDoesNotParseFallsBackToLines(t *testing.T) {
	src := "package broken\n\nfunc ( {\n" + strings.Repeat("x\n", 200)
	cs := chunkFile("broken.go", KindCode, src)
	if len(cs) < 3 || cs[0].StartLine != 1 || cs[0].Language != "go" {
		t.Fatalf("fallback chunks: %d %+v", len(cs), cs[0])
	}
}

func TestChunkMarkdownByHeadings(t *testing.T) {
	filler := strings.Repeat("Words that make this section long enough to stand alone. ", 4)
	src := "---\ntitle: x\n---\n# Guide\n\nIntro. " + filler + "\n\n## Install\n\nRun it. " + filler + "\n\n```sh\n# not a heading\nmake\n```\n\n### From source\n\nClone. " + filler + "\n\n## Use\n\nCall it. " + filler + "\n"
	cs := chunkFile("docs/guide.md", KindCode, src)
	var ctxs []string
	for _, c := range cs {
		ctxs = append(ctxs, c.Context)
		if strings.Contains(c.Text, "title: x") {
			t.Error("front matter was indexed")
		}
		if got := linesOf(src, c.StartLine, c.EndLine); got != c.Text {
			t.Errorf("chunk %d-%d is not those lines:\n%q\n%q", c.StartLine, c.EndLine, c.Text, got)
		}
	}
	want := []string{"Guide", "Guide > Install", "Guide > Install > From source", "Guide > Use"}
	if strings.Join(ctxs, "|") != strings.Join(want, "|") {
		t.Fatalf("contexts = %q, want %q", ctxs, want)
	}
	if !strings.Contains(cs[1].Text, "# not a heading") {
		t.Error("a # line inside a fence split the section")
	}
}

func TestChunkMarkdownSplitsLongSections(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Notes\n\n")
	for i := range 120 {
		fmt.Fprintf(&b, "Paragraph %d talks about topic %d at some length so that the section grows.\n\n", i, i)
	}
	b.WriteString("```go\nfunc keepMeWhole() {}\n```\n")
	src := b.String()
	cs := chunkFile("notes.md", KindKnowledge, src)
	if len(cs) < 3 {
		t.Fatalf("long section gave %d chunks", len(cs))
	}
	total := strings.Count(src, "\n")
	prev := 0
	for i, c := range cs {
		if c.StartLine < 1 || c.EndLine > total || c.StartLine > c.EndLine || c.StartLine < prev {
			t.Errorf("piece %d has lines %d-%d (file has %d, previous start %d)", i, c.StartLine, c.EndLine, total, prev)
		}
		prev = c.StartLine
		if c.Kind != KindKnowledge {
			t.Errorf("kind = %q", c.Kind)
		}
		// The piece's first paragraph is on its start line.
		first := ""
		for _, l := range strings.Split(c.Text, "\n") {
			if strings.HasPrefix(l, "Paragraph ") {
				first = l
				break
			}
		}
		if first != "" && !strings.Contains(linesOf(src, c.StartLine, c.EndLine), first) {
			t.Errorf("piece %d (%d-%d) does not contain its first paragraph %q", i, c.StartLine, c.EndLine, first)
		}
	}
	last := cs[len(cs)-1]
	if !strings.Contains(last.Text, "func keepMeWhole() {}") {
		t.Errorf("fenced code lost: %q", last.Text)
	}
}

func TestChunkOtherFilesByLinesWithOverlap(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "line %d\n", i+1)
	}
	cs := chunkFile("notes.txt", KindCode, b.String())
	if len(cs) != 3 {
		t.Fatalf("200 lines gave %d chunks", len(cs))
	}
	if cs[0].StartLine != 1 || cs[0].EndLine != maxChunkLines || cs[1].StartLine != maxChunkLines-overlapLines+1 || cs[2].EndLine != 200 {
		t.Errorf("windows: %d-%d, %d-%d, %d-%d", cs[0].StartLine, cs[0].EndLine, cs[1].StartLine, cs[1].EndLine, cs[2].StartLine, cs[2].EndLine)
	}
	if cs[0].Language != "text" {
		t.Errorf("language = %q", cs[0].Language)
	}
	one := chunkFile("min.js", KindCode, strings.Repeat("é", 20000))
	if len(one) != 1 || len(one[0].Text) > 2*maxChunkChars || !strings.HasPrefix(one[0].Text, "é") || strings.ContainsRune(one[0].Text, '\uFFFD') {
		t.Errorf("one giant line: %d chunks", len(one))
	}
}

func TestWordsSplitIdentifiers(t *testing.T) {
	var got []string
	words("readSetCookies(HTTPServer, max_bytes) naïveÉté", func(w string, part bool) {
		if part {
			w = "+" + w
		}
		got = append(got, w)
	})
	want := "readsetcookies +read +set +cookies httpserver +http +server max bytes naïveété +naïve +été"
	if strings.Join(got, " ") != want {
		t.Errorf("words = %q\nwant    %q", strings.Join(got, " "), want)
	}
	for in, out := range map[string]string{"cookies": "cooki", "cookie": "cooki", "parsed": "pars", "parse": "pars", "parsing": "pars", "entries": "entri", "entry": "entri", "status": "status"} {
		if stem(in) != out {
			t.Errorf("stem(%q) = %q, want %q", in, stem(in), out)
		}
	}
}

func TestChunkMarkdownMergesSmallSections(t *testing.T) {
	src := "# Errors\n\n_Status: established_\n\n## Rules\n\n1. Wrap errors.\n\n## Rationale\n\nLogs.\n"
	cs := chunkFile("docs/knowledge/conventions/errors.md", KindKnowledge, src)
	if len(cs) != 1 || cs[0].StartLine != 1 || cs[0].EndLine != 11 || cs[0].Text != strings.TrimSuffix(src, "\n") {
		t.Fatalf("small doc: %+v", cs)
	}
}
