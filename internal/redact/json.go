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
		if out[i] != vals[i] && objectID(vals[i]) {
			out[i] = vals[i] // a git object id is an address, never a secret of this run
			continue
		}
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

// batchSep joins texts checked in one pass.
const batchSep = "\n\x00\x00\n"

// strings redacts each of texts. The common case, no secret anywhere, costs
// one pass of the rules over all of them, not one per text; when that pass
// finds something, each text is redacted on its own, so a rule's keyword in
// one text never condemns another (a commit id beside a word like
// "sourcegraph" would match a token rule that only wants the keyword
// somewhere in the text).
func (r *Redactor) strings(texts []string) []string {
	joined := strings.Join(texts, batchSep)
	if r.String(joined) == joined {
		return texts
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

// objectID reports whether s is a git object id (40 or 64 lower-case hex
// digits): checkpoints keep commits by them, and a run cannot go on if one is
// cut out.
func objectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
