package strand

import "testing"

func TestToRNA(t *testing.T) {
	for _, tc := range []struct{ dna, want string }{
		{"", ""},
		{"C", "G"},
		{"G", "C"},
		{"T", "A"},
		{"A", "U"},
		{"ACGTGGTCTTAA", "UGCACCAGAAUU"},
	} {
		if got := ToRNA(tc.dna); got != tc.want {
			t.Errorf("ToRNA(%q) = %q, want %q", tc.dna, got, tc.want)
		}
	}
}
