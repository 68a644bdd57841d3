package luhn

import "testing"

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"1", false},
		{"0", false},
		{"059", true},
		{"59", true},
		{"055 444 285", true},
		{"055 444 286", false},
		{"8273 1232 7352 0569", false},
		{"4539 3195 0343 6467", true},
		{"1 2345 6789 1234 5678 9012", false},
		{"095 245 88", true},
		{"234 567 891 234", true},
		{"059a", false},
		{"055-444-285", false},
		{"055# 444$ 285", false},
		{" 0", false},
		{"0000 0", true},
		{"091", true},
		{":9", false},
	} {
		if got := Valid(tc.id); got != tc.want {
			t.Errorf("Valid(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
