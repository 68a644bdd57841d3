package summultiples

import "testing"

func TestSumMultiples(t *testing.T) {
	for _, tc := range []struct {
		limit    int
		divisors []int
		want     int
	}{
		{1, []int{3, 5}, 0}, {4, []int{3, 5}, 3}, {10, []int{3, 5}, 23},
		{20, []int{7, 13, 17}, 51}, {15, []int{4, 6}, 30}, {10000, []int{43, 47}, 2203160},
		{1, []int{0}, 0}, {10, []int{3, 0}, 18},
	} {
		if got := SumMultiples(tc.limit, tc.divisors...); got != tc.want {
			t.Errorf("SumMultiples(%d, %v) = %d, want %d", tc.limit, tc.divisors, got, tc.want)
		}
	}
}
