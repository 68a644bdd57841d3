package isogram

import "unicode"

// IsIsogram reports whether word repeats no letter.
func IsIsogram(word string) bool {
	seen := map[rune]bool{}
	for _, r := range word {
		if !unicode.IsLetter(r) {
			continue
		}
		r = unicode.ToLower(r)
		if seen[r] {
			return false
		}
		seen[r] = true
	}
	return true
}
