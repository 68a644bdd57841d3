package summultiples

// SumMultiples sums the numbers below limit that some divisor divides.
func SumMultiples(limit int, divisors ...int) int {
	sum := 0
	for n := 1; n < limit; n++ {
		for _, d := range divisors {
			if d != 0 && n%d == 0 {
				sum += n
				break
			}
		}
	}
	return sum
}
