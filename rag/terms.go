package rag

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// words returns the lower-cased alphanumeric runs of text; for a compound
// identifier (camelCase, snake_case, HTTPServer) it returns the whole
// identifier followed by its parts. Underscores separate words.
func words(text string, emit func(w string, part bool)) {
	start := -1
	for i := 0; i <= len(text); {
		var r rune
		size := 1
		if i < len(text) {
			r = rune(text[i])
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(text[i:])
			}
		}
		alnum := i < len(text) && (r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)))
		if alnum {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			emitIdent(text[start:i], emit)
			start = -1
		}
		i += size
	}
}

func emitIdent(id string, emit func(string, bool)) {
	upper := false
	for i := 0; i < len(id); i++ {
		if c := id[i]; c >= utf8.RuneSelf || c >= 'A' && c <= 'Z' {
			upper = true
			break
		}
	}
	if !upper {
		emit(id, false) // the common case: already lower case, no parts
		return
	}
	emit(strings.ToLower(id), false)
	if parts := splitCamel(id); len(parts) > 1 {
		for _, p := range parts {
			emit(strings.ToLower(p), true)
		}
	}
}

// splitCamel splits "parseHTTPRequest2x" into parse, HTTP, Request2x.
func splitCamel(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		boundary := unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev) ||
			unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))
		if boundary {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	return append(out, string(rs[start:]))
}

// stem folds common English inflections so "cookies" meets "cookie" and
// "parsed" meets "parse" (a few Porter steps, enough for code vocabulary).
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) >= 6:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) >= 5:
		w = w[:len(w)-2]
	}
	switch {
	case strings.HasSuffix(w, "y") && len(w) > 3:
		w = w[:len(w)-1] + "i"
	case strings.HasSuffix(w, "e") && len(w) > 3:
		w = w[:len(w)-1]
	}
	return w
}

// isStop reports words that carry no topic in questions or code: English
// function words and the keywords of common languages.
func isStop(w string) bool {
	switch w {
	case "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from",
		"is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those",
		"as", "if", "do", "does", "did", "how", "what", "where", "which", "who", "when", "why",
		"can", "will", "would", "should", "i", "we", "you", "my", "our", "there", "here", "into",
		"get", "gets", "got", "code", "file", "files", "function", "functions", "find", "done",
		"handled", "implemented", "defined", "happen", "happens", "some", "any", "not", "no",
		// language keywords
		"func", "return", "var", "const", "type", "struct", "interface", "package", "import",
		"else", "range", "nil", "err", "def", "self", "let", "fn", "pub", "int", "string", "bool",
		"true", "false", "null", "new", "class", "public", "private", "static", "void":
		return true
	}
	return false
}
