package isogram

import "testing"

func TestIsIsogram(t *testing.T) {
	for _, tc := range []struct {
		word string
		want bool
	}{
		{"", true}, {"isogram", true}, {"eleven", false}, {"zzyzx", false},
		{"Alphabet", false}, {"thumbscrew-japingly", true}, {"six-year-old", true}, {"Emily Jung Schwartzkopf", true},
		{"accentor", false},
	} {
		if got := IsIsogram(tc.word); got != tc.want {
			t.Errorf("IsIsogram(%q) = %v, want %v", tc.word, got, tc.want)
		}
	}
}
