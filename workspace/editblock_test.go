package workspace

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const fence = "```"

func TestParseEditBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []Edit
	}{
		{
			name: "Aider's canonical form: path line, fence, block",
			text: "Here is the change:\n\nmath/add.go\n" + fence + "go\n<<<<<<< SEARCH\nfunc Add() {}\n=======\nfunc Add() int { return 1 }\n>>>>>>> REPLACE\n" + fence + "\n",
			want: []Edit{{"math/add.go", "func Add() {}\n", "func Add() int { return 1 }\n"}},
		},
		{
			name: "no fence at all",
			text: "a.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n",
			want: []Edit{{"a.txt", "old\n", "new\n"}},
		},
		{
			name: "path in the fence info string",
			text: fence + "go cmd/main.go\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n" + fence,
			want: []Edit{{"cmd/main.go", "x\n", "y\n"}},
		},
		{
			name: "path as the whole info string, lang:path form",
			text: fence + "python:pkg/app.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n" + fence,
			want: []Edit{{"pkg/app.py", "x\n", "y\n"}},
		},
		{
			name: "path in backticks and bold",
			text: "**`src/lib.rs`**\n" + fence + "rust\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n" + fence,
			want: []Edit{{"src/lib.rs", "x\n", "y\n"}},
		},
		{
			name: "path as a heading with a colon",
			text: "### main.go:\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
			want: []Edit{{"main.go", "x\n", "y\n"}},
		},
		{
			name: "path after File: label, and leading ./",
			text: "File: ./internal/x.go\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
			want: []Edit{{"internal/x.go", "x\n", "y\n"}},
		},
		{
			name: "path picked out of a short sentence",
			text: "Edit `util/strings.go` like this:\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
			want: []Edit{{"util/strings.go", "x\n", "y\n"}},
		},
		{
			name: "Deepseek's form: path inside its own fence before the block's fence",
			text: fence + "python\nword_count.py\n" + fence + "\n" + fence + "python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n" + fence,
			want: []Edit{{"word_count.py", "x\n", "y\n"}},
		},
		{
			name: "extension-less file name",
			text: "Makefile\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
			want: []Edit{{"Makefile", "x\n", "y\n"}},
		},
		{
			name: "several blocks, the second reuses the path",
			text: "a.go\n" + fence + "go\n<<<<<<< SEARCH\n1\n=======\n2\n>>>>>>> REPLACE\n" + fence + "\n\n" + fence + "go\n<<<<<<< SEARCH\n3\n=======\n4\n>>>>>>> REPLACE\n" + fence + "\n\nb.go\n" + fence + "go\n<<<<<<< SEARCH\n5\n=======\n6\n>>>>>>> REPLACE\n" + fence + "\n",
			want: []Edit{{"a.go", "1\n", "2\n"}, {"a.go", "3\n", "4\n"}, {"b.go", "5\n", "6\n"}},
		},
		{
			name: "blocks back to back without fences reuse the path",
			text: "a.go\n<<<<<<< SEARCH\n1\n=======\n2\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n3\n=======\n4\n>>>>>>> REPLACE\n",
			want: []Edit{{"a.go", "1\n", "2\n"}, {"a.go", "3\n", "4\n"}},
		},
		{
			name: "empty SEARCH creates a file",
			text: "new/file.md\n" + fence + "\n<<<<<<< SEARCH\n=======\n# Title\n\nBody\n>>>>>>> REPLACE\n" + fence,
			want: []Edit{{"new/file.md", "", "# Title\n\nBody\n"}},
		},
		{
			name: "blank SEARCH counts as empty",
			text: "n.txt\n<<<<<<< SEARCH\n\n   \n=======\nx\n>>>>>>> REPLACE\n",
			want: []Edit{{"n.txt", "", "x\n"}},
		},
		{
			name: "empty REPLACE deletes",
			text: "a.go\n<<<<<<< SEARCH\ndead code\n=======\n>>>>>>> REPLACE\n",
			want: []Edit{{"a.go", "dead code\n", ""}},
		},
		{
			name: "5 to 9 marker characters, trailing spaces, CRLF",
			text: "a.go\r\n<<<<< SEARCH  \r\nold\r\n=========   \r\nnew\r\n>>>>>>>>> REPLACE \r\n",
			want: []Edit{{"a.go", "old\n", "new\n"}},
		},
		{
			name: "indented markers and lower-case words",
			text: "a.go\n  <<<<<<< search\nold\n  =======\nnew\n  >>>>>>> replace\n",
			want: []Edit{{"a.go", "old\n", "new\n"}},
		},
		{
			name: "a ======= line inside REPLACE is content",
			text: "README.rst\n<<<<<<< SEARCH\nTitle\n=======\nTitle\n=======\n>>>>>>> REPLACE\n",
			want: []Edit{{"README.rst", "Title\n", "Title\n=======\n"}},
		},
		{
			name: "text without blocks gives no edits",
			text: "I looked at the code and nothing needs to change.\n" + fence + "go\nfmt.Println()\n" + fence,
			want: nil,
		},
		{
			name: "indentation inside blocks is kept",
			text: "a.py\n<<<<<<< SEARCH\n    def f():\n        pass\n=======\n    def f():\n        return 1\n>>>>>>> REPLACE\n",
			want: []Edit{{"a.py", "    def f():\n        pass\n", "    def f():\n        return 1\n"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEditBlocks(tc.text)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestParseEditBlocksErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		block   int
		problem string
	}{
		{"first block without a path", "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", 1, "no file path"},
		{"a version number is not a path", "Bump to 1.2.3\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", 1, "no file path"},
		{"prose line is not a path", "Here is the fix\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", 1, "no file path"},
		{"missing divider and end", "a.go\n<<<<<<< SEARCH\nx\n", 1, "======= and >>>>>>> REPLACE are missing"},
		{"missing end", "a.go\n<<<<<<< SEARCH\nx\n=======\ny\n", 1, ">>>>>>> REPLACE is missing"},
		{"end before divider", "a.go\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n", 1, "came before ======="},
		{"second block not closed before third",
			"a.go\n<<<<<<< SEARCH\n1\n=======\n2\n>>>>>>> REPLACE\nb.go\n<<<<<<< SEARCH\n3\n=======\n4\n<<<<<<< SEARCH\n", 2, "REPLACE is missing"},
		{"search inside search", "a.go\n<<<<<<< SEARCH\nx\n<<<<<<< SEARCH\n", 1, "before ======= ended"},
		{"stray end marker", "a.go\n>>>>>>> REPLACE\n", 1, "without a <<<<<<< SEARCH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEditBlocks(tc.text)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want *ParseError", err)
			}
			if pe.Block != tc.block {
				t.Errorf("block %d, want %d (%v)", pe.Block, tc.block, err)
			}
			if !strings.Contains(pe.Problem, tc.problem) {
				t.Errorf("problem %q should contain %q", pe.Problem, tc.problem)
			}
			if !strings.HasPrefix(err.Error(), "edit block ") {
				t.Errorf("message %q should name the block", err)
			}
		})
	}
}
