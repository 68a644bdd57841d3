package config

// The checks of the key table's values (spec.check): kinds, ranges, the
// accepted words, URLs, paths and names, with the nearest key for a typo.
import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/pathglob"
)

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func checkString(f func(string) string) func(any) string {
	return func(v any) string {
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("expected a string, got %T", v)
		}
		return f(s)
	}
}

func checkInt(f func(int) string) func(any) string {
	return func(v any) string {
		n, ok := v.(int)
		if !ok {
			return fmt.Sprintf("expected an integer, got %T", v)
		}
		return f(n)
	}
}

func atLeast(min int) func(int) string {
	return func(n int) string {
		if n < min {
			return fmt.Sprintf("%d is below %d", n, min)
		}
		return ""
	}
}

func between(lo, hi int) func(int) string {
	return func(n int) string {
		if n < lo || n > hi {
			return fmt.Sprintf("%d is not between %d and %d", n, lo, hi)
		}
		return ""
	}
}

// checkFloat accepts lo..hi; openLo excludes lo itself.
func checkFloat(lo, hi float64, openLo bool) func(any) string {
	return func(v any) string {
		f, ok := v.(float64)
		if !ok {
			return fmt.Sprintf("expected a number, got %T", v)
		}
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return "not a finite number"
		case openLo && f <= lo:
			return fmt.Sprintf("%s must be above %s", fmtFloat(f), fmtFloat(lo))
		case f < lo:
			return fmt.Sprintf("%s is below %s", fmtFloat(f), fmtFloat(lo))
		case f > hi:
			return fmt.Sprintf("%s is above %s", fmtFloat(f), fmtFloat(hi))
		}
		return ""
	}
}

func checkTemperature(v any) string {
	p, ok := v.(*float64)
	if !ok {
		return fmt.Sprintf("expected a number, got %T", v)
	}
	if p == nil {
		return ""
	}
	return checkFloat(0, 2, false)(*p)
}

func checkDuration(positive bool) func(any) string {
	return func(v any) string {
		d, ok := v.(time.Duration)
		if !ok {
			return fmt.Sprintf("expected a duration, got %T", v)
		}
		if d < 0 || (positive && d == 0) {
			if positive {
				return fmt.Sprintf("%s must be above 0", formatDuration(d))
			}
			return fmt.Sprintf("%s is negative", formatDuration(d))
		}
		return ""
	}
}

func oneOf(accepted ...string) func(string) string {
	return func(s string) string {
		if slices.Contains(accepted, s) {
			return ""
		}
		msg := fmt.Sprintf("unknown value %q", s)
		if near := closest(s, accepted); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return msg
	}
}

// checkCommandArg refuses an empty argument and the prompt in argv.
func checkCommandArg(s string) string {
	if strings.Contains(s, "{prompt}") {
		return "the prompt would be in the command line, which other users of this machine can read (ps, /proc): use {prompt_file} (a file holding the prompt), or no placeholder (the prompt on standard input)"
	}
	return nonEmpty(s)
}

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "must not be empty"
	}
	return ""
}

func checkURL(emptyOK bool) func(string) string {
	return func(s string) string {
		if s == "" && emptyOK {
			return ""
		}
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Sprintf("not a URL: %v", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Sprintf("%q needs an http:// or https:// scheme", s)
		}
		if u.Host == "" {
			return fmt.Sprintf("%q has no host", s)
		}
		return ""
	}
}

// checkKeepAlive accepts what Ollama accepts for keep_alive.
func checkKeepAlive(s string) string {
	if s == "" {
		return ""
	}
	if _, err := time.ParseDuration(s); err == nil {
		return ""
	}
	if _, err := strconv.Atoi(s); err == nil {
		return ""
	}
	return fmt.Sprintf("%q is neither a duration nor a number of seconds", s)
}

func checkLocalPath(s string) string {
	if s == "" {
		return "must not be empty"
	}
	if !filepath.IsLocal(filepath.FromSlash(s)) {
		return fmt.Sprintf("%q leaves the repository (absolute, or with ..)", s)
	}
	return ""
}

// checkKnowledgeDir accepts a folder inside the repository that is not
// lemmings' own (.lemmings/: its runs, checkpoints, worktrees) or git's:
// supervisors write there, and a knowledge.dir of .lemmings/runs would
// have them write over the records of runs.
func checkKnowledgeDir(s string) string {
	if p := checkLocalPath(s); p != "" {
		return p
	}
	first, _, _ := strings.Cut(filepath.ToSlash(filepath.Clean(filepath.FromSlash(s))), "/")
	for _, own := range []string{".lemmings", ".git"} {
		if strings.EqualFold(first, own) {
			return fmt.Sprintf("%q is inside %s/, which is %s's own: give a folder of the repository's files, such as docs/knowledge", s, own, map[string]string{".lemmings": "lemmings", ".git": "git"}[own])
		}
	}
	if first == "." {
		return fmt.Sprintf("%q is the repository's top folder: give a folder of its own, such as docs/knowledge", s)
	}
	return ""
}

func checkGlob(s string) string {
	if strings.TrimSpace(s) == "" {
		return "an empty pattern"
	}
	if _, err := pathglob.Compile(s); err != nil { // names the pattern and the cause
		return err.Error()
	}
	return ""
}

// checkSandboxPath accepts an absolute path or one under ~/.
func checkSandboxPath(s string) string {
	if s == "" {
		return "an empty path"
	}
	if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/") {
		return fmt.Sprintf("%q is neither absolute nor under ~/", s)
	}
	return ""
}

// checkEnvName accepts a portable environment variable name.
func checkEnvName(s string) string {
	if s == "" {
		return "an empty name"
	}
	for i, r := range s {
		if r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return fmt.Sprintf("%q is not a variable name (letters, digits and _, not starting with a digit)", s)
	}
	return ""
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// formatDuration writes durations as people write them: 10m, 4h, 1h30m, 90s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// closest returns the candidate nearest to s when it is near enough to be a
// typo: one edit for short words, two for longer ones.
func closest(s string, candidates []string) string {
	best, bestD := "", min(2, max(1, len(s)/3))+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1) // a transposition is one typo
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
