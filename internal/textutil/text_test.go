package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipCutsOnARuneBoundaryAndSaysSo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: no half of it
		{"abc", 0, "…"},
		{"", 0, ""},
	}
	for _, tc := range tests {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	long := strings.Repeat("日本", 200)
	for n := range 20 {
		got := Clip(long, n)
		if !utf8.ValidString(got) || len(got) > n+len("…") {
			t.Errorf("Clip(…, %d) = %q: invalid or too long", n, got)
		}
	}
}

func TestFirstLineSkipsBlankLinesAndTrims(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"one\ntwo":             "one",
		"\n\n  lead  \r\nnext": "lead",
		"":                     "",
		"only":                 "only",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJoinParagraphsSkipsEmptyPartsAndTrims(t *testing.T) {
	if got := JoinParagraphs("  a\n", "", " \n", "b "); got != "a\n\nb" {
		t.Errorf("JoinParagraphs = %q", got)
	}
	if got := JoinParagraphs("", " "); got != "" {
		t.Errorf("nothing to join: %q", got)
	}
}

func TestCountSaysOneInTheSingular(t *testing.T) {
	for n, want := range map[int]string{0: "0 tasks", 1: "1 task", 2: "2 tasks"} {
		if got := Count(n, "task"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFirstNonEmptySkipsBlanksAndTrims(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"", "  ", "\n b \n", "c"}, "b"},
		{[]string{" a"}, "a"},
		{[]string{" ", ""}, ""},
		{nil, ""},
	} {
		if got := FirstNonEmpty(tc.in...); got != tc.want {
			t.Errorf("FirstNonEmpty(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := ClipTrimmed("  abcdef \n", 3); got != "abc…" {
		t.Errorf("ClipTrimmed = %q, want %q", got, "abc…")
	}
}
