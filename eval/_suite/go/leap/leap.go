package leap

// IsLeapYear reports whether year is a leap year.
func IsLeapYear(year int) bool {
	return false
}
