package diffsquares

import "testing"

func TestSquares(t *testing.T) {
	for _, tc := range []struct{ n, sq, sum, diff int }{
		{1, 1, 1, 0}, {5, 225, 55, 170}, {10, 3025, 385, 2640}, {100, 25502500, 338350, 25164150},
	} {
		if got := SquareOfSum(tc.n); got != tc.sq {
			t.Errorf("SquareOfSum(%d) = %d, want %d", tc.n, got, tc.sq)
		}
		if got := SumOfSquares(tc.n); got != tc.sum {
			t.Errorf("SumOfSquares(%d) = %d, want %d", tc.n, got, tc.sum)
		}
		if got := Difference(tc.n); got != tc.diff {
			t.Errorf("Difference(%d) = %d, want %d", tc.n, got, tc.diff)
		}
	}
}
