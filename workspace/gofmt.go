package workspace

import (
	"bytes"
	"errors"
	"go/format"
	"io/fs"
	"os"
	"path"
	"strings"
)

// gofmtWritten is the Go file the model wrote at p, as gofmt prints it: a small coder
// indents with spaces (Qwen2.5-Coder-1.5B committed `    return a + b`), and the gates, the
// review and the commit should see the code a Go developer would. It is formatted with the
// standard library's go/format, which runs nothing. The text comes back as written when p is
// not a Go file, is under testdata/ or vendor/ (the go command skips those, and a golden
// file's spacing may be the point), does not parse (the parse checks decide what happens to
// it), or when the file was there before and not gofmt'd: formatting it would rewrite the
// repository's own lines, which the task did not ask for (a file that did not parse before
// is formatted: no spacing of the repository's can be told from it).
func gofmtWritten(p string, prev []byte, existed bool, data []byte) []byte {
	if path.Ext(p) != ".go" {
		return data
	}
	for _, dir := range strings.Split(path.Dir(path.Clean("/"+p)), "/") {
		if dir == "testdata" || dir == "vendor" {
			return data
		}
	}
	if existed {
		if was, err := format.Source(prev); err == nil && !bytes.Equal(was, prev) {
			return data
		}
	}
	out, err := format.Source(data)
	if err != nil {
		return data
	}
	return out
}

// gofmtAt is gofmtWritten for a file about to be written at rel under root, its previous
// text read from there.
func gofmtAt(root *os.Root, p, rel string, data []byte) []byte {
	if path.Ext(rel) != ".go" {
		return data
	}
	prev, err := root.ReadFile(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return data // unreadable before: the write itself will say why
	}
	return gofmtWritten(p, prev, err == nil, data)
}
