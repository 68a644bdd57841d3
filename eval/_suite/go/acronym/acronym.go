package acronym

// Abbreviate returns the acronym of s.
func Abbreviate(s string) string {
	return ""
}
