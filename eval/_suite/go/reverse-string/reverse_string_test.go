package reverse

import "testing"

func TestReverse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""}, {"robot", "tobor"}, {"Ramen", "nemaR"},
		{"I'm hungry!", "!yrgnuh m'I"}, {"racecar", "racecar"}, {"子猫", "猫子"},
	} {
		if got := Reverse(tc.in); got != tc.want {
			t.Errorf("Reverse(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
