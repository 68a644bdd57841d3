package workspace

import (
	"strings"
	"testing"
)

func FuzzParseEditBlocks(f *testing.F) {
	f.Add("a.go\n```go\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n")
	f.Add("<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE")
	f.Add("x.py\n<<<<< SEARCH\r\n\r\n=========\r\n>>>>>>>>> REPLACE\r\n<<<<<<< SEARCH\n")
	f.Add("```go main.go\n<<<<<<< SEARCH\n=======\n=======\n>>>>>>> REPLACE\n```")
	f.Add("**File: `a b/c.go`**\n<<<<<<< SEARCH\n<<<<<<< SEARCH\n")
	f.Fuzz(func(t *testing.T, text string) {
		edits, err := ParseEditBlocks(text)
		if err != nil {
			if edits != nil {
				t.Fatal("edits returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "edit block ") {
				t.Fatalf("error %q does not name the block", err)
			}
			return
		}
		for _, e := range edits {
			if e.Path == "" {
				t.Fatalf("edit without path from %q", text)
			}
			if e.Search != "" && !strings.HasSuffix(e.Search, "\n") {
				t.Fatalf("search %q not line-terminated", e.Search)
			}
			if strings.Contains(e.Search, "\r\n") || strings.Contains(e.Replace, "\r\n") {
				t.Fatal("CRLF kept in an edit")
			}
		}
	})
}

func FuzzApplyEdit(f *testing.F) {
	f.Add("package a\n\nfunc A() {\n\treturn\n}\n", "func A() {\n\treturn\n}\n", "func A() {}\n")
	f.Add("a\r\nb\r\n", "b\n", "c\n")
	f.Add("  x\n  x\n", "x\n", "y\n")
	f.Add("no newline", "newline", "x\ny")
	f.Add("", "", "new file\n")
	f.Add("\tif x {\n\t\ty()\n\t}\n", "    if x {\n        y()\n    }\n", "    if x {\n        z()\n    }\n")
	f.Add("a\nb\nc\n", "\n\nb\n\n", "\n")
	f.Fuzz(func(t *testing.T, content, search, replace string) {
		e := Edit{Path: "f", Search: search, Replace: replace}
		out, info, err := applyEdit(content, e)
		if err != nil {
			if out != "" {
				t.Fatal("output returned with an error")
			}
			return
		}
		switch info.kind {
		case MatchExact:
			// An exact match replaces the one occurrence and nothing else.
			pos := exactPositions(content, search)
			if len(pos) != 1 {
				t.Fatalf("exact match with %d positions", len(pos))
			}
			repl := replace
			if dominantEOL(content) == "\r\n" && !strings.Contains(repl, "\r\n") {
				repl = withEOL(repl, "\r\n")
			}
			if !strings.Contains(out, repl) {
				t.Fatalf("result %q lacks the replacement %q", out, repl)
			}
			if want := content[:pos[0]] + repl + content[pos[0]+len(search):]; out != want {
				t.Fatalf("exact result %q, want %q", out, want)
			}
		case MatchCreate, MatchAppend:
			if !strings.HasPrefix(out, content) {
				t.Fatalf("append lost the content")
			}
		case MatchWhitespace, MatchIndentation:
			if strings.TrimSpace(search) == "" {
				t.Fatal("tolerant match of a blank search")
			}
		default:
			t.Fatalf("unknown match kind %q", info.kind)
		}
		// A unique exact occurrence must always be taken as exact.
		if strings.TrimSpace(search) != "" && len(exactPositions(content, search)) == 1 && info.kind != MatchExact {
			t.Fatalf("unique exact occurrence matched as %q", info.kind)
		}
	})
}
