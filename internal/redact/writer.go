package redact

import (
	"bytes"
	"encoding/json"
	"io"
)

// Writer returns a writer that redacts each Write before passing it on to w:
// a Write that is JSON lines (--json output) has its string values redacted
// (JSON), anything else is redacted as text. Each Write is redacted on its
// own, so a caller writes a line (or a whole message) at a time — as
// fmt.Fprintf does — and a secret is never split between two writes.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{r: r, w: w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (rw *writer) Write(p []byte) (int, error) {
	out := rw.r.chunk(p)
	if _, err := rw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the writer written to (to ask it whether it is a terminal).
func (rw *writer) Unwrap() io.Writer { return rw.w }

// chunk redacts one write: JSON lines line by line, else as text.
func (r *Redactor) chunk(p []byte) []byte {
	trimmed := bytes.TrimSpace(p)
	if len(trimmed) == 0 || trimmed[0] != '{' && trimmed[0] != '[' {
		return r.Bytes(p)
	}
	var out []byte
	changed := false
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		body := bytes.TrimRight(line, "\r\n")
		red := body
		if len(bytes.TrimSpace(body)) > 0 {
			if !json.Valid(body) {
				return r.Bytes(p) // not JSON lines after all
			}
			red = r.JSON(body)
		}
		changed = changed || !bytes.Equal(red, body)
		out = append(append(out, red...), line[len(body):]...)
	}
	if !changed {
		return p
	}
	return out
}
