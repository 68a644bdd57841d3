package llm

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
)

// Redaction uses a curated rule set rather than gitleaks' detect package.
// gitleaks would bring ~220 rules but link ~60 modules (+10 MB), is not
// documented as a library API, and honours an inline "gitleaks:allow" marker
// that a model's text could use to smuggle a secret past it. The rules here
// follow gitleaks' for the credentials a coding agent is likely to meet, run
// in microseconds, and honour no marker at all.

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

var secretRules = []secretRule{
	{id: "private-key", keywords: []string{"private key"}, multiline: true,
		re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)`)},
	{id: "openrouter-key", keywords: []string{"sk-or-"},
		re: regexp.MustCompile(`\bsk-or-(?:v1-)?[A-Za-z0-9]{32,}\b`)},
	{id: "anthropic-key", keywords: []string{"sk-ant-"},
		re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{32,}`)},
	{id: "openai-key", keywords: []string{"sk-"},
		re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), check: hasDigitAndLetter},
	{id: "github-token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b`)},
	{id: "gitlab-token", keywords: []string{"glpat-"},
		re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{id: "aws-access-key", keywords: []string{"akia", "asia", "abia", "acca"},
		re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{id: "slack-token", keywords: []string{"xox"},
		re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{id: "slack-webhook", keywords: []string{"hooks.slack.com"},
		re: regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/_-]{20,}`)},
	{id: "google-api-key", keywords: []string{"aiza"},
		re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{id: "google-oauth-token", keywords: []string{"ya29."},
		re: regexp.MustCompile(`\bya29\.[0-9A-Za-z_-]{20,}`)},
	{id: "stripe-key", keywords: []string{"_live_", "_test_"},
		re: regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}\b`)},
	{id: "huggingface-token", keywords: []string{"hf_"},
		re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{34,}\b`)},
	{id: "jwt", keywords: []string{"eyj"},
		re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	{id: "bearer-token", keywords: []string{"bearer"}, group: 1,
		re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`), check: hasDigitAndLetter},
	{id: "url-password", keywords: []string{"://"}, group: 1, needs: "@",
		re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@"'<>\[\]]+:([^\s/@"'<>\[\]]{3,})@`), check: notPlaceholder},
	// --password hunter2, --api-key=…
	{id: "flag-secret", keywords: []string{"--"}, group: 1, needs: "= \t",
		re:    regexp.MustCompile(`(?i)--(?:password|passwd|token|secret|api-key|apikey|access-key|client-secret)(?:=|[ \t]+)["']?([^\s"']{4,})`),
		check: looksLikeSecretValue},
	// key = "value", "key": "value", key := 'value' (a quoted literal).
	{id: "assigned-secret", keywords: secretKeywords, group: 1, needs: ":=>",
		re:    regexp.MustCompile(`(?i)` + secretKeyPattern + `["']?[ \t]*(?::=|=>|=|:)[ \t]*["'` + "`" + `]([^"'` + "`" + `\s]{4,200})["'` + "`" + `]`),
		check: quotedSecretValue},
	// KEY=value, key: value (unquoted, as in .env and YAML files).
	{id: "assigned-secret", keywords: secretKeywords, group: 1, needs: ":=>",
		re:    regexp.MustCompile(`(?i)` + secretKeyPattern + `["']?[ \t]*(?::=|=>|=|:)[ \t]*([^\s"'` + "`" + `,;<>]{4,})`),
		check: looksLikeSecretValue},
}

// secretKeyPattern matches a name that ends like a secret's: DB_PASSWORD,
// apiKey, client_secret, aws_secret_access_key, GITHUB_TOKEN…
const secretKeyPattern = `[\w.-]*(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?key|credentials?)(?:[_-]?(?:value|str|string|hash))?`

var secretKeywords = []string{"pass", "pwd", "secret", "token", "key", "credential"}

// Redact replaces secrets in text with [REDACTED:<kind>]: API keys
// (OpenAI, OpenRouter, Anthropic, GitHub, GitLab, AWS, Slack, Google, Stripe,
// Hugging Face), bearer tokens, JWTs, private key blocks, passwords in URLs,
// and values assigned to password/secret/token/key-like names. Code that only
// names a secret (os.Getenv("API_KEY"), ${TOKEN}, max_tokens: 4096) is left
// alone. No inline marker switches it off.
func Redact(text string) string {
	if text == "" {
		return text
	}
	for _, r := range secretRules {
		if r.multiline && hasAny(asciiLower(text), r.keywords) {
			text = r.apply(text)
		}
	}
	lowerAll := asciiLower(text)
	var active []*secretRule
	for i := range secretRules {
		if r := &secretRules[i]; !r.multiline && hasAny(lowerAll, r.keywords) {
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

func hasDigitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.IndexFunc(s, func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}) >= 0
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

// redactMessages returns msgs with secrets removed from contents and tool
// call arguments (string values of the JSON, so it stays valid JSON).
func redactMessages(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		m.Content = Redact(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				tc.Arguments = redactJSON(tc.Arguments)
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		out[i] = m
	}
	return out
}

// redactJSON redacts every string in a JSON document.
func redactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		b, _ := json.Marshal(Redact(string(raw)))
		return b
	}
	v = redactValue(v)
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func redactValue(v any) any {
	switch t := v.(type) {
	case string:
		return Redact(t)
	case []any:
		for i := range t {
			t[i] = redactValue(t[i])
		}
	case map[string]any:
		for k, x := range t {
			// A secret under a secret-like key is a secret even when short.
			if s, ok := x.(string); ok && isSecretKey(k) && len(s) >= 4 && quotedSecretValue(s) {
				t[k] = "[REDACTED:assigned-secret]"
				continue
			}
			t[k] = redactValue(x)
		}
	}
	return v
}

var reSecretKey = regexp.MustCompile(`(?i)(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)$`)

func isSecretKey(k string) bool { return reSecretKey.MatchString(k) }
