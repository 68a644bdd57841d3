package pangram

// IsPangram reports whether s uses every letter from a to z.
func IsPangram(s string) bool {
	return false
}
