package twofer

import "testing"

func TestShareWith(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"", "One for you, one for me."},
		{"Alice", "One for Alice, one for me."},
		{"Bob", "One for Bob, one for me."},
	} {
		if got := ShareWith(tc.name); got != tc.want {
			t.Errorf("ShareWith(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
