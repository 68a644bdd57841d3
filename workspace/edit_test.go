package workspace

import (
	"errors"
	"strings"
	"testing"
)

func TestApplyEditMatches(t *testing.T) {
	t.Parallel()
	goFile := "package m\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"
	tests := []struct {
		name    string
		content string
		edit    Edit
		want    string
		kind    string
	}{
		{
			name:    "exact whole lines",
			content: goFile,
			edit:    Edit{Search: "func Add(a, b int) int {\n\treturn a + b\n}\n", Replace: "func Add(a, b int) int {\n\treturn b + a\n}\n"},
			want:    strings.Replace(goFile, "return a + b", "return b + a", 1),
			kind:    MatchExact,
		},
		{
			name:    "exact inside a line (JSON action style)",
			content: goFile,
			edit:    Edit{Search: "a - b", Replace: "a - b - 0"},
			want:    strings.Replace(goFile, "a - b", "a - b - 0", 1),
			kind:    MatchExact,
		},
		{
			name:    "trailing whitespace in SEARCH",
			content: goFile,
			edit:    Edit{Search: "\treturn a + b   \n}  \n", Replace: "\treturn a + b + 0\n}\n"},
			want:    strings.Replace(goFile, "return a + b\n", "return a + b + 0\n", 1),
			kind:    MatchWhitespace,
		},
		{
			name:    "trailing whitespace in the file",
			content: "a  \nb\t\nc\n",
			edit:    Edit{Search: "a\nb\n", Replace: "A\nB\n"},
			want:    "A\nB\nc\n",
			kind:    MatchWhitespace,
		},
		{
			name:    "indentation missing in SEARCH and REPLACE is added back",
			content: "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n",
			edit:    Edit{Search: "def f(self):\n    return 1\n", Replace: "def f(self):\n    x = 1\n    return x\n"},
			want:    "class A:\n    def f(self):\n        x = 1\n        return x\n\n    def g(self):\n        return 2\n",
			kind:    MatchIndentation,
		},
		{
			name:    "too much indentation is removed",
			content: "func f() {\n\tx := 1\n\t_ = x\n}\n",
			edit:    Edit{Search: "\t\tx := 1\n\t\t_ = x\n", Replace: "\t\tx := 2\n\t\t_ = x\n"},
			want:    "func f() {\n\tx := 2\n\t_ = x\n}\n",
			kind:    MatchIndentation,
		},
		{
			name:    "spaces in SEARCH, tabs in the file",
			content: "func f() {\n\tif true {\n\t\tx()\n\t}\n}\n",
			edit:    Edit{Search: "    if true {\n        x()\n    }\n", Replace: "    if true {\n        x()\n        y()\n    }\n"},
			want:    "func f() {\n\tif true {\n\t\tx()\n\t\ty()\n\t}\n}\n",
			kind:    MatchIndentation,
		},
		{
			name:    "inner whitespace runs differ",
			content: "x  :=  compute(a,  b)\nnext()\n",
			edit:    Edit{Search: "x := compute(a, b)\n", Replace: "x := compute(b, a)\n"},
			want:    "x := compute(b, a)\nnext()\n",
			kind:    MatchWhitespace,
		},
		{
			name:    "CRLF file, LF SEARCH: CRLF kept",
			content: "one\r\ntwo\r\nthree\r\n",
			edit:    Edit{Search: "two\nthree\n", Replace: "2\n3\n"},
			want:    "one\r\n2\r\n3\r\n",
			kind:    MatchWhitespace,
		},
		{
			name:    "CRLF file, single-line exact match keeps CRLF in a multi-line REPLACE",
			content: "one\r\ntwo\r\n",
			edit:    Edit{Search: "two", Replace: "two\nthree"},
			want:    "one\r\ntwo\r\nthree\r\n",
			kind:    MatchExact,
		},
		{
			name:    "file without final newline stays without",
			content: "a\nb",
			edit:    Edit{Search: "b\n", Replace: "B\n"},
			want:    "a\nB",
			kind:    MatchWhitespace,
		},
		{
			name:    "spurious blank lines around SEARCH are ignored",
			content: "a\nb\nc\n",
			edit:    Edit{Search: "\nb\n\n", Replace: "\nB\n\n"},
			want:    "a\nB\nc\n",
			kind:    MatchWhitespace,
		},
		{
			name:    "empty REPLACE deletes the lines",
			content: "keep\ndrop 1\ndrop 2\nkeep too\n",
			edit:    Edit{Search: "drop 1\ndrop 2\n", Replace: ""},
			want:    "keep\nkeep too\n",
			kind:    MatchExact,
		},
		{
			name:    "whole-line SEARCH does not land mid-line when a line-start match exists",
			content: "xfoo\nfoo\n",
			edit:    Edit{Search: "foo\n", Replace: "bar\n"},
			want:    "xfoo\nbar\n",
			kind:    MatchExact,
		},
		{
			name:    "empty SEARCH on empty content creates",
			content: "",
			edit:    Edit{Search: "", Replace: "hello\n"},
			want:    "hello\n",
			kind:    MatchCreate,
		},
		{
			name:    "empty SEARCH appends, adding the missing newline",
			content: "a",
			edit:    Edit{Search: "", Replace: "b\n"},
			want:    "a\nb\n",
			kind:    MatchAppend,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, info, err := applyEdit(tc.content, tc.edit)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if info.kind != tc.kind {
				t.Errorf("matched as %q, want %q", info.kind, tc.kind)
			}
			if pub, err := ApplyEdit(tc.content, tc.edit); err != nil || pub != got {
				t.Errorf("ApplyEdit disagrees with applyEdit: %q, %v", pub, err)
			}
		})
	}
}

func TestApplyEditAmbiguous(t *testing.T) {
	t.Parallel()
	content := "x := 1\ny := 2\nx := 1\nz := 3\nx := 1\n"
	_, err := ApplyEdit(content, Edit{Path: "a.go", Search: "x := 1\n", Replace: "x := 9\n"})
	var ae *AmbiguousMatchError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v, want *AmbiguousMatchError", err)
	}
	if ae.Count != 3 || len(ae.Lines) != 3 || ae.Lines[0] != 1 || ae.Lines[1] != 3 || ae.Lines[2] != 5 {
		t.Errorf("count %d lines %v, want 3 at 1, 3, 5", ae.Count, ae.Lines)
	}
	msg := err.Error()
	for _, want := range []string{"3 places", "a.go", "lines 1, 3, 5", "more surrounding lines"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// Tolerant matches must be unique too.
	_, err = ApplyEdit("  a\n  a\n", Edit{Search: "a\n", Replace: "b\n"})
	if !errors.As(err, &ae) || ae.Count != 2 {
		t.Errorf("tolerant ambiguity: %v", err)
	}
}

func TestApplyEditNoMatchShowsClosestLines(t *testing.T) {
	t.Parallel()
	content := "package m\n\nimport \"fmt\"\n\nfunc Greet(name string) {\n\tfmt.Println(\"hello\", name)\n}\n\nfunc other() {}\n"
	_, err := ApplyEdit(content, Edit{Path: "greet.go",
		Search:  "func Greet(name string) {\n\tfmt.Println(\"Hello\", name)\n}\n",
		Replace: "func Greet(name string) {\n\tfmt.Println(\"Hi\", name)\n}\n"})
	var nm *NoMatchError
	if !errors.As(err, &nm) {
		t.Fatalf("got %v, want *NoMatchError", err)
	}
	if nm.Path != "greet.go" || nm.StartLine != 5 {
		t.Errorf("path %q start %d, want greet.go at 5", nm.Path, nm.StartLine)
	}
	if nm.Closest != "func Greet(name string) {\n\tfmt.Println(\"hello\", name)\n}\n" {
		t.Errorf("closest %q", nm.Closest)
	}
	if nm.Similarity < 0.8 || nm.Similarity >= 1 {
		t.Errorf("similarity %.2f, want high but below 1", nm.Similarity)
	}
	msg := err.Error()
	for _, want := range []string{"not found in greet.go", "Did you mean", "lines 5-7", "    6| \tfmt.Println(\"hello\", name)", "exactly"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestApplyEditNoMatchNothingSimilar(t *testing.T) {
	t.Parallel()
	_, err := ApplyEdit("alpha\nbeta\n", Edit{Search: "zzzz qqqq\n", Replace: "x\n"})
	var nm *NoMatchError
	if !errors.As(err, &nm) || nm.Closest != "" {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "read the file again") {
		t.Errorf("message %q", err)
	}
}

func TestApplyEditNoMatchNotesAlreadyApplied(t *testing.T) {
	t.Parallel()
	_, err := ApplyEdit("x := 2\n", Edit{Search: "x := 1\n", Replace: "x := 2\n"})
	var nm *NoMatchError
	if !errors.As(err, &nm) || !nm.AlreadyApplied || !strings.Contains(err.Error(), "already") {
		t.Fatalf("got %v", err)
	}
}
