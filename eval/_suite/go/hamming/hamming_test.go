package hamming

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"A", "A", 0}, {"G", "T", 1}, {"GGACTGAAATCTG", "GGACTGAAATCTG", 0},
		{"GGACGGATTCTG", "AGGACGGATTCT", 9},
	} {
		got, err := Distance(tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, %v, want %d", tc.a, tc.b, got, err, tc.want)
		}
	}
	for _, tc := range [][2]string{{"AATG", "AAA"}, {"ATA", "AGTG"}, {"", "G"}} {
		if _, err := Distance(tc[0], tc[1]); err == nil {
			t.Errorf("Distance(%q, %q): no error for strands of different lengths", tc[0], tc[1])
		}
	}
}
