package summultiples

// SumMultiples sums the numbers below limit that some divisor divides.
func SumMultiples(limit int, divisors ...int) int {
	return 0
}
