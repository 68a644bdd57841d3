package tinymodel

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestDefaultVocabIsWellFormed(t *testing.T) {
	v, err := DefaultVocab()
	if err != nil {
		t.Fatal(err)
	}
	controls := controlTokens()
	if want := len(controls) + 256 + DefaultMerges; len(v.Tokens) != want {
		t.Fatalf("%d tokens, want %d", len(v.Tokens), want)
	}
	if len(v.Types) != len(v.Tokens) || len(v.Merges) != DefaultMerges {
		t.Fatalf("%d types, %d merges", len(v.Types), len(v.Merges))
	}
	for i, tok := range controls {
		if v.Tokens[i] != tok || v.Types[i] != tokenTypeControl {
			t.Errorf("id %d = %q type %d, want control token %q", i, v.Tokens[i], v.Types[i], tok)
		}
	}
	for b := range 256 {
		id := len(controls) + b
		got, ok := v.Bytes(id)
		if !ok || !bytes.Equal(got, []byte{byte(b)}) || v.Types[id] != tokenTypeNormal {
			t.Errorf("id %d (%q) decodes to %v %v, want byte %#02x", id, v.Tokens[id], got, ok, b)
		}
		if strings.ContainsAny(v.Tokens[id], " \n\t") {
			t.Errorf("byte token %q holds whitespace", v.Tokens[id])
		}
	}
	seen := map[string]bool{}
	for _, tok := range v.Tokens {
		if seen[tok] {
			t.Errorf("token %q twice", tok)
		}
		seen[tok] = true
	}
	for rank, m := range v.Merges {
		l, r, ok := strings.Cut(m, " ")
		if !ok || strings.Contains(r, " ") {
			t.Fatalf("merge %d %q is not two tokens", rank, m)
		}
		li, ri, ji := v.ID(l), v.ID(r), v.ID(l+r)
		if li < 0 || ri < 0 || ji < 0 {
			t.Errorf("merge %d %q: ids %d %d → %d; every side and result must be a token", rank, m, li, ri, ji)
		}
		if ji <= li || ji <= ri {
			t.Errorf("merge %d %q: result id %d is not newer than its parts %d, %d", rank, m, ji, li, ri)
		}
	}
	for _, m := range v.Merges {
		if _, ok := v.Bytes(v.ID(strings.Replace(m, " ", "", 1))); !ok {
			t.Errorf("merged token of %q does not decode to bytes", m)
		}
	}
}

func TestBuildVocabIsDeterministic(t *testing.T) {
	first, err := BuildVocab(corpus, DefaultMerges)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // map iteration order differs between calls; the result must not
		again, err := BuildVocab(corpus, DefaultMerges)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first.Tokens, again.Tokens) || !slices.Equal(first.Merges, again.Merges) {
			t.Fatal("two builds from the same text differ")
		}
	}
}

func TestBuildVocabRefusesWhatTheTextCannotGive(t *testing.T) {
	if _, err := BuildVocab("ab ab", 5); err == nil || !strings.Contains(err.Error(), "only") {
		t.Errorf("5 merges from %q: err = %v", "ab ab", err)
	}
	if _, err := BuildVocab(corpus, -1); err == nil {
		t.Error("negative merge count accepted")
	}
	v, err := BuildVocab("", 0)
	if err != nil || len(v.Tokens) != len(controlTokens())+256 {
		t.Errorf("no merges: %d tokens, %v", len(v.Tokens), err)
	}
}

// encode is a plain BPE encoder over v: the test's check that the merges tokenize text.
func encode(v Vocab, text string) []int {
	rank := map[string]int{}
	for i, m := range v.Merges {
		rank[m] = i
	}
	enc := byteEncoder()
	var ids []int
	for _, piece := range pretokenize.FindAllString(text, -1) {
		var syms []string
		for _, b := range []byte(piece) {
			syms = append(syms, string(enc[b]))
		}
		for {
			best, at := len(v.Merges), -1
			for i := 0; i+1 < len(syms); i++ {
				if r, ok := rank[syms[i]+" "+syms[i+1]]; ok && r < best {
					best, at = r, i
				}
			}
			if at < 0 {
				break
			}
			syms = append(syms[:at], append([]string{syms[at] + syms[at+1]}, syms[at+2:]...)...)
		}
		for _, s := range syms {
			ids = append(ids, v.ID(s))
		}
	}
	return ids
}

func TestMergesTokenizeTextLosslessly(t *testing.T) {
	v, err := DefaultVocab()
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{corpus, "The tests pass.", `{"verdict": "fail"}`, "naïve ☃ \x00\xff"} {
		ids := encode(v, text)
		var back []byte
		for _, id := range ids {
			b, ok := v.Bytes(id)
			if !ok {
				t.Fatalf("%q: token id %d does not decode", text, id)
			}
			back = append(back, b...)
		}
		if string(back) != text {
			t.Errorf("%q decodes back to %q", text, back)
		}
		if text == corpus && len(ids) > len(text)/2 {
			t.Errorf("the merges compress the corpus only to %d tokens from %d bytes", len(ids), len(text))
		}
	}
}
