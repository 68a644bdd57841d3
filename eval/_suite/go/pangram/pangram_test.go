package pangram

import "testing"

func TestIsPangram(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", false}, {"abcdefghijklmnopqrstuvwxyz", true},
		{"the quick brown fox jumps over the lazy dog", true},
		{"a quick movement of the enemy will jeopardize five gunboats", false},
		{"Five quacking Zephyrs jolt my wax bed.", true},
		{"the_quick_brown_fox_jumps_over_the_lazy_dog", true},
	} {
		if got := IsPangram(tc.s); got != tc.want {
			t.Errorf("IsPangram(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
