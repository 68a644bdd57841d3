package workspace

import (
	"regexp"
	"strings"
)

// Edit replaces Search with Replace in the file at Path (repository-relative).
// An empty (or blank) Search creates the file, or appends to it if it exists.
type Edit struct {
	Path    string `json:"path"`
	Search  string `json:"search"`
	Replace string `json:"replace"`
}

// Markers of Aider's SEARCH/REPLACE format. Models often get the count of
// marker characters wrong, so 5 to 9 are accepted, and trailing spaces.
var (
	headMarker    = regexp.MustCompile(`^\s*<{5,9}\s*(?i:SEARCH)\s*$`)
	dividerMarker = regexp.MustCompile(`^\s*={5,9}\s*$`)
	updateMarker  = regexp.MustCompile(`^\s*>{5,9}\s*(?i:REPLACE)\s*$`)
	fenceLine     = regexp.MustCompile("^\\s*(?:`{3,}|~{3,})(.*)$")
)

// isBareFileName reports the extension-less file names a model may give
// alone on a line.
func isBareFileName(s string) bool {
	switch s {
	case "Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "Jenkinsfile",
		"Vagrantfile", "Gemfile", "Rakefile", "Procfile", "Justfile", "justfile",
		"LICENSE", "README", "CHANGELOG", "AUTHORS", "NOTICE":
		return true
	}
	return false
}

// ParseEditBlocks extracts the edits of a reply written in Aider's
// SEARCH/REPLACE format:
//
//	path/to/file.go
//	```go
//	<<<<<<< SEARCH
//	old lines
//	=======
//	new lines
//	>>>>>>> REPLACE
//	```
//
// The path is the line before the block or its opening fence (bare, in
// backticks or bold, after "#", or as the fence's info string, e.g.
// "```go path/to/file.go"); a block without one reuses the previous block's
// path. Fences are optional. A reply with no block gives no edits and no
// error. A malformed block gives a *ParseError naming the block and the
// problem.
func ParseEditBlocks(text string) ([]Edit, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var edits []Edit
	prev := ""
	block := 0
	for i := 0; i < len(lines); i++ {
		if updateMarker.MatchString(lines[i]) {
			return nil, &ParseError{Block: block + 1, Line: i + 1,
				Problem: ">>>>>>> REPLACE without a <<<<<<< SEARCH before it: each block is <<<<<<< SEARCH, the old lines, =======, the new lines, >>>>>>> REPLACE"}
		}
		if !headMarker.MatchString(lines[i]) {
			continue
		}
		block++
		path := findBlockPath(lines, i)
		if path == "" {
			path = prev
		}
		if path == "" {
			return nil, &ParseError{Block: block, Line: i + 1,
				Problem: "no file path: put the file's path alone on the line just before <<<<<<< SEARCH (or before the opening ``` fence)"}
		}
		j := i + 1
		var search []string
		for ; j < len(lines) && !dividerMarker.MatchString(lines[j]); j++ {
			switch {
			case headMarker.MatchString(lines[j]):
				return nil, &ParseError{Block: block, Line: j + 1,
					Problem: "a new <<<<<<< SEARCH started before ======= ended the SEARCH part of this block"}
			case updateMarker.MatchString(lines[j]):
				return nil, &ParseError{Block: block, Line: j + 1,
					Problem: ">>>>>>> REPLACE came before =======: each block is <<<<<<< SEARCH, the old lines, =======, the new lines, >>>>>>> REPLACE"}
			}
			search = append(search, lines[j])
		}
		if j >= len(lines) {
			return nil, &ParseError{Block: block, Line: i + 1,
				Problem: "the block for " + path + " is not finished: ======= and >>>>>>> REPLACE are missing"}
		}
		k := j + 1
		var replace []string
		for ; k < len(lines) && !updateMarker.MatchString(lines[k]); k++ {
			if headMarker.MatchString(lines[k]) {
				return nil, &ParseError{Block: block, Line: k + 1,
					Problem: ">>>>>>> REPLACE is missing: the next <<<<<<< SEARCH started before this block ended"}
			}
			replace = append(replace, lines[k])
		}
		if k >= len(lines) {
			return nil, &ParseError{Block: block, Line: j + 1,
				Problem: "the block for " + path + " is not finished: >>>>>>> REPLACE is missing after the new lines"}
		}
		e := Edit{Path: path, Search: joinBlockLines(search), Replace: joinBlockLines(replace)}
		if strings.TrimSpace(e.Search) == "" {
			e.Search = ""
		}
		edits = append(edits, e)
		prev = path
		i = k
	}
	return edits, nil
}

// joinBlockLines restores the block's text: every line ends with "\n".
func joinBlockLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// findBlockPath looks back from the SEARCH marker at line i for the file
// path, across fence lines and blank lines, up to four lines back.
func findBlockPath(lines []string, i int) string {
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		l := strings.TrimSpace(lines[j])
		if l == "" {
			continue
		}
		if headMarker.MatchString(l) || dividerMarker.MatchString(l) || updateMarker.MatchString(l) {
			return ""
		}
		if m := fenceLine.FindStringSubmatch(l); m != nil {
			if p := fenceInfoPath(m[1]); p != "" {
				return p
			}
			continue
		}
		return cleanPathLine(l)
	}
	return ""
}

// fenceInfoPath finds a path in a fence's info string: "go main.go",
// "main.go", "go:main.go", "python title=app.py".
func fenceInfoPath(info string) string {
	for _, tok := range strings.Fields(info) {
		if _, after, ok := strings.Cut(tok, "="); ok {
			tok = after
		}
		if before, after, ok := strings.Cut(tok, ":"); ok && !strings.Contains(tok, "://") && before != "" {
			tok = after
		}
		tok = strings.Trim(tok, "`*\"'")
		if looksLikePath(tok) {
			return normalizeBlockPath(tok)
		}
	}
	return ""
}

// cleanPathLine strips the decoration models put around a path line:
// "**main.go**", "`main.go`", "### main.go", "main.go:", "File: main.go",
// and picks the one path out of a short sentence ("Edit `main.go`:").
func cleanPathLine(l string) string {
	s := strings.TrimSpace(l)
	s = strings.TrimLeft(s, "#")
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, `\_`, "_")
	s = strings.Trim(s, "*`\"' ")
	s = strings.TrimRight(s, ":")
	s = strings.Trim(s, "*`\"' ")
	low := strings.ToLower(s)
	for _, prefix := range []string{"file:", "filename:", "path:", "file path:"} {
		if strings.HasPrefix(low, prefix) {
			s = strings.Trim(strings.TrimSpace(s[len(prefix):]), "*`\"' ")
			break
		}
	}
	if s == "" || s == "..." {
		return ""
	}
	if !strings.ContainsAny(s, " \t") {
		if looksLikePath(s) {
			return normalizeBlockPath(s)
		}
		return ""
	}
	// A sentence: accept it only if exactly one word in it is a path.
	found := ""
	for _, tok := range strings.Fields(s) {
		tok = strings.Trim(tok, "*`\"'()[],;:")
		tok = strings.TrimRight(tok, ".")
		if looksLikePath(tok) {
			if found != "" {
				return ""
			}
			found = tok
		}
	}
	return normalizeBlockPath(found)
}

// looksLikePath accepts names with a directory or an extension, and the
// common extension-less file names.
func looksLikePath(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t<>|") || strings.HasSuffix(s, ".") {
		return false
	}
	if isBareFileName(s) {
		return true
	}
	if strings.Contains(s, "/") {
		return true
	}
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 || dot == len(s)-1 {
		return false
	}
	ext := s[dot+1:]
	if c := ext[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false // "1.2.3" is a version, not a file
	}
	for _, r := range ext {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			continue
		}
		return false
	}
	return true
}

func normalizeBlockPath(p string) string {
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}
