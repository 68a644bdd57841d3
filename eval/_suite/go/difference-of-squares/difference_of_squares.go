package diffsquares

// SquareOfSum is (1 + 2 + … + n)².
func SquareOfSum(n int) int {
	return 0
}

// SumOfSquares is 1² + 2² + … + n².
func SumOfSquares(n int) int {
	return 0
}

// Difference is SquareOfSum(n) - SumOfSquares(n).
func Difference(n int) int {
	return 0
}
