package diffsquares

// SquareOfSum is (1 + 2 + … + n)².
func SquareOfSum(n int) int {
	s := n * (n + 1) / 2
	return s * s
}

// SumOfSquares is 1² + 2² + … + n².
func SumOfSquares(n int) int {
	return n * (n + 1) * (2*n + 1) / 6
}

// Difference is SquareOfSum(n) - SumOfSquares(n).
func Difference(n int) int {
	return SquareOfSum(n) - SumOfSquares(n)
}
