package pangram

import "strings"

// IsPangram reports whether s uses every letter from a to z.
func IsPangram(s string) bool {
	s = strings.ToLower(s)
	for c := 'a'; c <= 'z'; c++ {
		if !strings.ContainsRune(s, c) {
			return false
		}
	}
	return true
}
