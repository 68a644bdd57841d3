package darts

import "testing"

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y float64
		want int
	}{
		{"outside the target", -9, 9, 0},
		{"on the outer circle", 0, 10, 1},
		{"on the middle circle", -5, 0, 5},
		{"on the inner circle", 0, -1, 10},
		{"at the centre", 0, 0, 10},
		{"near the centre", -0.1, -0.1, 10},
		{"just within the inner circle", 0.7, 0.7, 10},
		{"just outside the inner circle", 0.8, -0.8, 5},
		{"just within the middle circle", -3.5, 3.5, 5},
		{"just outside the middle circle", -3.6, -3.6, 1},
		{"just within the outer circle", -7.0, 7.0, 1},
		{"just outside the outer circle", 7.1, -7.1, 0},
		{"asymmetric position between the inner and middle circles", 0.5, -4, 5},
	} {
		if got := Score(tc.x, tc.y); got != tc.want {
			t.Errorf("%s: Score(%v, %v) = %d, want %d", tc.name, tc.x, tc.y, got, tc.want)
		}
	}
}
