package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
)

// DiffHash returns a hash of a unified diff that ignores what can differ
// between two identical attempts: line endings, trailing whitespace, the
// blob hashes of "index" lines, and the order of the files. An empty diff
// (no change at all) hashes to "".
func DiffHash(diff string) string {
	diff = strings.ReplaceAll(diff, "\r\n", "\n")
	var files []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			files = append(files, s)
		}
		cur.Reset()
	}
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			flush()
		}
		if strings.HasPrefix(line, "index ") {
			continue
		}
		cur.WriteString(strings.TrimRight(line, " \t\r"))
		cur.WriteByte('\n')
	}
	flush()
	if len(files) == 0 {
		return ""
	}
	slices.Sort(files)
	h := sha256.New()
	for _, f := range files {
		io.WriteString(h, f)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Defaults of ActionLoop.
const (
	DefaultLoopWindow    = 10
	DefaultLoopThreshold = 3
)

// ActionLoop spots an agent repeating itself: the same tool with the same
// arguments getting the same result Threshold times within its last Window
// actions. The zero value uses DefaultLoopWindow and DefaultLoopThreshold.
// It is not safe for concurrent use.
type ActionLoop struct {
	Window    int
	Threshold int
	recent    []string // signatures of the last Window actions, oldest first
}

// NewActionLoop returns a detector over the last window actions that flags
// a signature seen threshold times (≤ 0: the defaults).
func NewActionLoop(window, threshold int) *ActionLoop {
	return &ActionLoop{Window: window, Threshold: threshold}
}

// Record adds an action and reports whether its signature (tool, arguments,
// result) has now been seen Threshold times within the window, and how many
// times. JSON arguments are compared by meaning, not by key order or spacing.
func (l *ActionLoop) Record(tool, args, result string) (repeated bool, count int) {
	window, threshold := l.Window, l.Threshold
	if window <= 0 {
		window = DefaultLoopWindow
	}
	if threshold <= 0 {
		threshold = DefaultLoopThreshold
	}
	sig := actionSignature(tool, args, result)
	l.recent = append(l.recent, sig)
	if len(l.recent) > window {
		l.recent = append(l.recent[:0], l.recent[len(l.recent)-window:]...)
	}
	for _, s := range l.recent {
		if s == sig {
			count++
		}
	}
	return count >= threshold, count
}

// Reset forgets the recorded actions.
func (l *ActionLoop) Reset() { l.recent = l.recent[:0] }

func actionSignature(tool, args, result string) string {
	h := sha256.New()
	io.WriteString(h, tool)
	h.Write([]byte{0})
	io.WriteString(h, canonicalJSON(args))
	h.Write([]byte{0})
	io.WriteString(h, timings.ReplaceAllString(result, "<t>"))
	return hex.EncodeToString(h.Sum(nil))
}

// timings are the durations a tool's output reports ("ok  pkg  0.004s",
// "1 passed in 0.02s", "Time: 1.2 s"): they differ between two runs of the
// same gate on the same code, so a repeat is compared without them.
var timings = regexp.MustCompile(`\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|m|h)\b`)

// canonicalJSON re-encodes valid JSON with sorted keys and no spacing;
// anything else is returned as it is.
func canonicalJSON(s string) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}
