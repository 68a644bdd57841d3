package redact

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// The rules run gitleaks' detector (github.com/zricethezav/gitleaks/v8,
// its default ~220 rules, the ones its project keeps up to date) and, after
// it, lemmings' own rules for what gitleaks has no rule for (OpenRouter keys,
// Google OAuth tokens, passwords in URLs, --password flags). Neither honours
// an inline marker: model text cannot opt out with "gitleaks:allow".

var (
	leaksOnce     sync.Once
	leaksDetector *detect.Detector
	leaksErr      error
)

// gitleaks returns the shared detector. Its constructor writes viper's
// global instance, so it runs once; DetectString is safe for concurrent use.
func gitleaks() (*detect.Detector, error) {
	leaksOnce.Do(func() {
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			leaksErr = fmt.Errorf("gitleaks default config: %w", err)
			return
		}
		d.IgnoreGitleaksAllow = true
		d.MaxDecodeDepth = 0 // secrets as written; no base64 decoding passes
		leaksDetector = d
	})
	return leaksDetector, leaksErr
}

// secretRule finds one kind of secret. group is the submatch holding the
// secret itself (0: the whole match); keywords are lower-case strings one of
// which must occur for the rule to run at all.
type secretRule struct {
	id       string
	re       *regexp.Regexp
	group    int
	keywords []string
	// check, when set, must accept the secret (rules out placeholders and
	// code that merely names a secret).
	check func(string) bool
	// Rules run line by line (Go's regexp is slow at finding submatches in
	// long texts), only on lines holding a keyword and one of the bytes of
	// needs; multiline rules, whose secrets span lines, run on the whole
	// text.
	multiline bool
	needs     string
}

// ownRules cover secrets gitleaks has no rule for.
var ownRules = []secretRule{
	// A key block cut off before its END line (a reply stopped mid-key);
	// gitleaks' private-key rule wants the whole block.
	{id: "private-key", keywords: []string{"private key"}, multiline: true,
		re:    regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----\s*[A-Za-z0-9+/=]{16,}[A-Za-z0-9+/=\s:,-]*`),
		check: func(block string) bool { return !strings.Contains(block, "-----END") }},
	{id: "openrouter-key", keywords: []string{"sk-or-"},
		re: regexp.MustCompile(`\bsk-or-(?:v1-)?[A-Za-z0-9]{32,}\b`)},
	{id: "google-oauth-token", keywords: []string{"ya29."},
		re: regexp.MustCompile(`\bya29\.[0-9A-Za-z_-]{20,}`)},
	{id: "url-password", keywords: []string{"://"}, group: 1, needs: "@",
		re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@"'<>\[\]]+:([^\s/@"'<>\[\]]{3,})@`), check: notPlaceholder},
	// --password hunter2, --api-key=…
	{id: "flag-secret", keywords: []string{"--"}, group: 1, needs: "= \t",
		re:    regexp.MustCompile(`(?i)--(?:password|passwd|token|secret|api-key|apikey|access-key|client-secret)(?:=|[ \t]+)["']?([^\s"']{4,})`),
		check: looksLikeSecretValue},
	// A password assigned in code or config, also a short or low-entropy
	// one (DB_PASSWORD=hunter2hunter2) that gitleaks' generic rule, which
	// wants 10+ characters of entropy > 3.5, lets through.
	{id: "password-assignment", keywords: []string{"pass", "pwd"}, group: 1, needs: ":=>",
		re:    regexp.MustCompile(`(?i)` + passwordKeyPattern + `["']?[ \t]*(?::=|=>|=|:)[ \t]*["'` + "`" + `]([^"'` + "`" + `\s]{4,200})["'` + "`" + `]`),
		check: quotedSecretValue},
	{id: "password-assignment", keywords: []string{"pass", "pwd"}, group: 1, needs: ":=>",
		re:    regexp.MustCompile(`(?i)` + passwordKeyPattern + `["']?[ \t]*(?::=|=>|=|:)[ \t]*([^\s"'` + "`" + `,;<>]{4,})`),
		check: looksLikeSecretValue},
}

// passwordKeyPattern matches a name that ends like a password's: DB_PASSWORD,
// passwd, adminPwd, ssh_passphrase.
const passwordKeyPattern = `\b[\w.-]*(?:password|passwd|pwd|passphrase)`

// redactFindings cuts each finding's secret out of the places its match
// occurs (a finding carries the matched text and the secret within it, not
// byte offsets).
func redactFindings(text string, findings []report.Finding) string {
	if len(findings) == 0 {
		return text
	}
	type span struct {
		start, end int
		rule       string
	}
	var spans []span
	for _, f := range findings {
		if f.Secret == "" {
			continue
		}
		within := strings.Index(f.Match, f.Secret)
		found := false
		if within >= 0 {
			for off := 0; ; {
				i := strings.Index(text[off:], f.Match)
				if i < 0 {
					break
				}
				start := off + i + within
				spans = append(spans, span{start, start + len(f.Secret), f.RuleID})
				found = true
				off += i + len(f.Match)
			}
		}
		if !found { // the match was not found as is: cut the secret wherever it occurs
			for off := 0; ; {
				i := strings.Index(text[off:], f.Secret)
				if i < 0 {
					break
				}
				spans = append(spans, span{off + i, off + i + len(f.Secret), f.RuleID})
				off += i + len(f.Secret)
			}
		}
	}
	if len(spans) == 0 {
		return text
	}
	// Longest first at each start, then merge overlaps into the first span.
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		if cur.start < last {
			continue
		}
		b.WriteString(text[last:cur.start])
		b.WriteString("[REDACTED:" + cur.rule + "]")
		last = cur.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// applyOwnRules runs lemmings' own rules, line by line but for multiline ones.
func applyOwnRules(text string) string {
	for _, r := range ownRules {
		if r.multiline && hasAny(asciiLower(text), r.keywords) {
			text = r.apply(text)
		}
	}
	lowerAll := asciiLower(text)
	var active []*secretRule
	for i := range ownRules {
		if r := &ownRules[i]; !r.multiline && hasAny(lowerAll, r.keywords) {
			active = append(active, r)
		}
	}
	if len(active) == 0 {
		return text
	}
	var b strings.Builder
	changed := false
	rest := text
	for len(rest) > 0 {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		off := len(text) - len(rest)
		rest = rest[len(line):]
		lower := lowerAll[off : off+len(line)]
		orig := line
		for _, r := range active {
			if r.needs != "" && !strings.ContainsAny(line, r.needs) || !hasAny(lower, r.keywords) {
				continue
			}
			if out := r.apply(line); out != line {
				line, lower = out, asciiLower(out)
			}
		}
		if line != orig && !changed {
			changed = true
			b.Grow(len(text))
			b.WriteString(text[:len(text)-len(rest)-len(orig)])
		}
		if changed {
			b.WriteString(line)
		}
	}
	if !changed {
		return text
	}
	return b.String()
}

// asciiLower lower-cases ASCII letters only, keeping byte offsets.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func (r secretRule) apply(text string) string {
	idx := r.re.FindAllStringSubmatchIndex(text, -1)
	if len(idx) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		start, end := m[2*r.group], m[2*r.group+1]
		if start < 0 || start < last {
			continue
		}
		if strings.Contains(text[start:end], "REDACTED") || r.check != nil && !r.check(text[start:end]) {
			continue
		}
		b.WriteString(text[last:start])
		b.WriteString("[REDACTED:" + r.id + "]")
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

func hasAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func notPlaceholder(s string) bool {
	l := strings.ToLower(s)
	for _, p := range []string{"${", "{{", "<", "%s", "xxx", "***", "redacted", "password", "passwd", "secret", "changeme", "example"} {
		if strings.Contains(l, p) {
			return false
		}
	}
	return true
}

var (
	reNumber     = regexp.MustCompile(`^[0-9][0-9_.]*[kKmM]?$`)
	reCodeLike   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|[()\[\]{}]`)
	reIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z_]*$`)
	reEnvRefLike = regexp.MustCompile(`^\$|^%[A-Za-z_]+%$|^[A-Z][A-Z0-9_]*$`)
	typeWords    = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "bool": true, "int": true,
		"any": true, "null": true, "none": true, "nil": true, "true": true, "false": true, "undefined": true,
		"required": true, "optional": true, "object": true, "str": true, "bytes": true}
)

// quotedSecretValue accepts a quoted literal assigned to a secret-like name
// unless it is a number, a placeholder or a type name.
func quotedSecretValue(v string) bool {
	return !reNumber.MatchString(v) && notPlaceholder(v) && !typeWords[strings.ToLower(v)]
}

// looksLikeSecretValue accepts an unquoted assigned value that could be a
// secret: not a number (max_tokens: 4096), not code (getToken(), cfg.Secret),
// not a reference ($TOKEN, ${X}, API_KEY), not a placeholder or type name,
// and not a plain identifier (token: Token, password: string) unless it is
// long and random-looking. A value with digits counts; so does a long one
// of varied characters.
func looksLikeSecretValue(v string) bool {
	if reNumber.MatchString(v) || reCodeLike.MatchString(v) || reEnvRefLike.MatchString(v) ||
		!notPlaceholder(v) || typeWords[strings.ToLower(v)] {
		return false
	}
	if reIdentifier.MatchString(v) {
		return len(v) >= 16 && entropy(v) >= 3.5
	}
	if strings.ContainsAny(v, "0123456789") {
		return true
	}
	return len(v) >= 12 && entropy(v) >= 3.0
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// rules applies the rules (gitleaks', then lemmings' own) to text. If the
// detector cannot be built, nothing is let through: the whole text is
// replaced.
func rules(text string) string {
	d, err := gitleaks()
	if err != nil {
		return "[REDACTED:redactor-unavailable: " + err.Error() + "]"
	}
	text = redactFindings(text, d.DetectString(text))
	return applyOwnRules(text)
}

// secretKeySuffixes end a JSON key or variable name under which any value is
// a secret (password, db_passwd, api_key, apiKey, client-secret, token…).
var secretKeySuffixes = []string{"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key",
	"accesskey", "access_key", "access-key", "privatekey", "private_key", "private-key", "credential", "credentials"}

// isSecretKey: a JSON key or variable name under which any value is a secret.
func isSecretKey(k string) bool {
	if len(k) < 3 || len(k) > 64 {
		return false
	}
	k = asciiLower(k)
	for _, s := range secretKeySuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}
