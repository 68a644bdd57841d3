package leap

import "testing"

func TestIsLeapYear(t *testing.T) {
	for _, tc := range []struct {
		year int
		want bool
	}{
		{2015, false}, {1970, false}, {1996, true}, {1960, true},
		{2100, false}, {1900, false}, {2000, true}, {2400, true}, {1800, false},
	} {
		if got := IsLeapYear(tc.year); got != tc.want {
			t.Errorf("IsLeapYear(%d) = %v, want %v", tc.year, got, tc.want)
		}
	}
}
