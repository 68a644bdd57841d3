package termprogress

import (
	"testing"

	"github.com/mattn/go-runewidth"
)

func TestFitWidthCutsToTheColumnsLeft(t *testing.T) {
	cases := []struct {
		line  string
		width int
		want  string
	}{
		{"short", 80, "short"},
		{"[ 1s] implementor t1 Fix MeanWordLength integer division [milestone 1/2 · tasks 0 done of 1 · 100 tok/s]", 40,
			"[ 1s] implementor t1 Fix MeanWordLengt…"},
		{"exactly ten", 12, "exactly ten"},
		{"exactly ten", 11, "exactly t…"},
		{"[1s] 日本語のタスク名", 12, "[1s] 日本…"}, // wide characters count twice
		{"anything", 0, "anything"},       // unknown width: leave it
	}
	for _, tc := range cases {
		got := fitWidth(tc.line, tc.width)
		if got != tc.want {
			t.Errorf("fitWidth(%q, %d) = %q, want %q", tc.line, tc.width, got, tc.want)
		}
		if tc.width > 1 && runewidth.StringWidth(got) >= tc.width {
			t.Errorf("fitWidth(%q, %d) fills %d columns: the terminal would wrap it", tc.line, tc.width, runewidth.StringWidth(got))
		}
	}
}
