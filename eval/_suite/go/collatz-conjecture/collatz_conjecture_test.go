package collatzconjecture

import "testing"

func TestCollatzConjecture(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 0}, {16, 4}, {12, 9}, {1000000, 152}} {
		got, err := CollatzConjecture(tc.n)
		if err != nil || got != tc.want {
			t.Errorf("CollatzConjecture(%d) = %d, %v, want %d", tc.n, got, err, tc.want)
		}
	}
	for _, n := range []int{0, -15} {
		if _, err := CollatzConjecture(n); err == nil {
			t.Errorf("CollatzConjecture(%d): no error", n)
		}
	}
}
