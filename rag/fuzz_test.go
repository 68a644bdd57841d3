package rag

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzChunk checks that chunking any text never panics and yields chunks
// whose line ranges lie inside the file, in order of their start.
func FuzzChunk(f *testing.F) {
	f.Add(goSrc, uint8(0))
	f.Add("# T\n\n## A\n```\n# x\n", uint8(1))
	f.Add("---\na: b\n---\n# T\ntext\n", uint8(1))
	f.Add("package p\nfunc (", uint8(0))
	f.Add(strings.Repeat("x\n", 300), uint8(2))
	f.Fuzz(func(t *testing.T, text string, kind uint8) {
		if !utf8.ValidString(text) {
			return // Update skips such files before chunking
		}
		name := []string{"f.go", "f.md", "f.txt"}[kind%3]
		n := len(splitLines(text))
		prev := 0
		for _, c := range chunkFile(name, KindCode, text) {
			if c.StartLine < 1 || c.EndLine > n || c.StartLine > c.EndLine {
				t.Fatalf("%s: chunk lines %d-%d outside 1-%d", name, c.StartLine, c.EndLine, n)
			}
			if name != "f.md" && c.StartLine < prev {
				t.Fatalf("%s: chunk starts at %d before the previous start %d", name, c.StartLine, prev)
			}
			prev = c.StartLine
			if c.Hash == "" || strings.TrimSpace(c.Text) == "" {
				t.Fatalf("%s: empty chunk %+v", name, c)
			}
		}
	})
}
