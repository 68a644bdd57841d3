package darts

import "math"

// Score returns the points a dart landing at (x, y) earns.
func Score(x, y float64) int {
	switch d := math.Hypot(x, y); {
	case d <= 1:
		return 10
	case d <= 5:
		return 5
	case d <= 10:
		return 1
	}
	return 0
}
