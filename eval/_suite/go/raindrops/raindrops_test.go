package raindrops

import "testing"

func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "1"}, {3, "Pling"}, {5, "Plang"}, {7, "Plong"}, {15, "PlingPlang"},
		{21, "PlingPlong"}, {35, "PlangPlong"}, {105, "PlingPlangPlong"}, {52, "52"},
	} {
		if got := Convert(tc.n); got != tc.want {
			t.Errorf("Convert(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
