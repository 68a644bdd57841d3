package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// JSON returns raw with secrets removed from its string values, leaving
// everything else byte for byte (key order, numbers, spacing): a checkpoint's
// state or an event line stays the same document with the secrets cut out.
// A string under a secret-like key ("password", "api_key", "client_secret")
// is a secret even when short. Object keys are kept. Text that is not JSON
// is redacted as text.
func (r *Redactor) JSON(raw []byte) []byte {
	toks, ok := scanStrings(raw)
	if !ok {
		return r.Bytes(raw)
	}
	if len(toks) == 0 {
		return raw
	}
	vals := make([]string, len(toks))
	for i, t := range toks {
		vals[i] = t.decode(raw)
	}
	out := r.strings(vals)
	for i, t := range toks {
		if t.secretKey && out[i] == vals[i] && len(vals[i]) >= 4 && quotedSecretValue(vals[i]) {
			out[i] = "[REDACTED:assigned-secret]"
		}
	}
	var b bytes.Buffer
	last := 0
	for i, t := range toks {
		if out[i] == vals[i] {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(raw))
		}
		b.Write(raw[last:t.start])
		enc, _ := json.Marshal(out[i])
		b.Write(enc)
		last = t.end
	}
	if last == 0 {
		return raw
	}
	b.Write(raw[last:])
	return b.Bytes()
}

// batchSep joins texts redacted in one pass; no rule's match crosses it in
// practice, and when one does the texts are redacted one by one.
const batchSep = "\n\x00\x00\n"

// strings redacts each of texts. The common case, no secret anywhere, costs
// one pass of the rules over all of them, not one per text.
func (r *Redactor) strings(texts []string) []string {
	joined := strings.Join(texts, batchSep)
	red := r.String(joined)
	if red == joined {
		return texts
	}
	if parts := strings.Split(red, batchSep); len(parts) == len(texts) {
		return parts
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = r.String(t)
	}
	return out
}

// Strings returns texts with secrets removed from each: one pass of the
// rules over all of them when none holds a secret.
func (r *Redactor) Strings(texts []string) []string { return r.strings(texts) }

// strTok is a string value of a JSON document: raw[start:end] with quotes.
type strTok struct {
	start, end int
	escaped    bool
	// secretKey: the value of a key like "password" or "api_key".
	secretKey bool
}

func (t strTok) decode(raw []byte) string {
	if !t.escaped {
		return string(raw[t.start+1 : t.end-1])
	}
	var s string
	if json.Unmarshal(raw[t.start:t.end], &s) != nil {
		return string(raw[t.start+1 : t.end-1])
	}
	return s
}

// scanStrings finds the string values (not keys) of a JSON document; false
// when raw is not valid JSON.
func scanStrings(raw []byte) ([]strTok, bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	var toks []strTok
	lastKey := ""
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		t := strTok{start: i}
		j := i + 1
		for ; j < len(raw) && raw[j] != '"'; j++ {
			if raw[j] == '\\' {
				t.escaped = true
				j++
			}
		}
		t.end = j + 1
		i = j
		k := t.end
		for k < len(raw) && (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '\n' || raw[k] == '\r') {
			k++
		}
		if k < len(raw) && raw[k] == ':' {
			lastKey = t.decode(raw)
			continue
		}
		// A value right after "key": (not inside an array under it).
		p := t.start - 1
		for p >= 0 && (raw[p] == ' ' || raw[p] == '\t' || raw[p] == '\n' || raw[p] == '\r') {
			p--
		}
		t.secretKey = p >= 0 && raw[p] == ':' && isSecretKey(lastKey)
		toks = append(toks, t)
	}
	return toks, true
}
