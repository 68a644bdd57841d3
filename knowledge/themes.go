package knowledge

import (
	"slices"
	"strings"
	"unicode"
)

// isStopWord reports words dropped from theme matching: they say nothing
// about a topic.
func isStopWord(w string) bool {
	switch w {
	case "the", "and", "for", "with", "from", "into", "onto", "that", "this", "these", "those",
		"are", "was", "were", "will", "shall", "should", "must", "can", "could", "may", "might",
		"not", "its", "our", "your", "their", "has", "have", "had", "been", "being", "all", "any",
		"each", "every", "some", "more", "most", "less", "few", "one", "two", "per", "via", "use",
		"uses", "used", "using", "add", "adds", "added", "make", "makes", "new", "old", "doc",
		"docs", "document", "documents", "conventions", "convention", "design", "lesson", "lessons",
		"domain", "rule", "rules", "note", "notes", "about", "how", "what", "when", "where", "which",
		"who", "why", "also", "than", "then", "there", "here", "such", "only", "just", "over",
		"under", "out", "off", "own", "same", "other", "again", "further", "once", "both", "very":
		return true
	}
	return false
}

// themeWords turns phrases into normalised topic words: lower case, split on
// anything that is not a letter or digit and on camelCase, stop words and
// words under three letters dropped, plurals folded ("handlers" → "handler").
func themeWords(src ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range src {
		for _, w := range splitWords(s) {
			w = stem(strings.ToLower(w))
			if len([]rune(w)) < 3 || isStopWord(w) || seen[w] {
				continue
			}
			seen[w] = true
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// splitWords splits on non-alphanumerics and camelCase boundaries.
func splitWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}
