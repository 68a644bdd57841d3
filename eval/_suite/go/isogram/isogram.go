package isogram

// IsIsogram reports whether word repeats no letter.
func IsIsogram(word string) bool {
	return false
}
