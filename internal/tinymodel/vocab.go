package tinymodel

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Control tokens of the generated vocabulary, in id order (ids 0..6). The role tokens are
// what the Modelfile templates render around each message.
const (
	TokenBOS       = "<s>"
	TokenEndOfText = "<|endoftext|>"
	TokenSystem    = "<|system|>"
	TokenUser      = "<|user|>"
	TokenAssistant = "<|assistant|>"
	TokenTool      = "<|tool|>"
	TokenEnd       = "<|end|>"
)

// GGUF token types (llama.cpp's numbering).
const (
	tokenTypeNormal  int32 = 1
	tokenTypeControl int32 = 3
)

// DefaultMerges is how many BPE merges the default vocabulary learns.
const DefaultMerges = 90

// corpus is the paragraph the default vocabulary's merges are learned from. ASCII only, so
// every merged token decodes to printable text.
const corpus = `Lemmings is a small tool that plans work on a code base, asks a local model to
write the change, runs the tests and keeps what passes. The model reads the task, the notes
and the files it needs; it answers with edits, and the tool checks every answer before it
touches the tree. When the tests fail, the tool tells the model what went wrong and tries
again, but only a few times: then it stops, writes a report and leaves the work tree clean.
The notes are kept in plain files, so the team can read them, change them and share them.
Every run has a log, and every step of the run can be resumed after a stop. {"name": "read",
"arguments": {"path": "main.go"}} is the shape of a tool call, and [1, 2, 3] is a list.`

// Vocab is a GPT-2 style byte-level BPE vocabulary: control tokens, the 256 byte tokens and
// the tokens made by the merges, in id order.
type Vocab struct {
	Tokens []string // token text in GPT-2's byte-to-unicode spelling
	Types  []int32  // GGUF token type per token
	Merges []string // "left right", in rank order; both sides and their join are tokens
}

// controlTokens lists the control tokens in id order.
func controlTokens() []string {
	return []string{TokenBOS, TokenEndOfText, TokenSystem, TokenUser, TokenAssistant, TokenTool, TokenEnd}
}

// DefaultVocab returns the vocabulary every generated model uses: DefaultMerges merges
// learned from the built-in paragraph.
func DefaultVocab() (Vocab, error) {
	return BuildVocab(corpus, DefaultMerges)
}

// pretokenize splits text the way GPT-2 does before BPE: merges never cross these pieces.
var pretokenize = regexp.MustCompile(`'(?:s|t|re|ve|m|ll|d)| ?\pL+| ?\pN+| ?[^\s\pL\pN]+|\s+`)

// BuildVocab learns n BPE merges from text and returns the vocabulary. It fails when text
// offers fewer than n merges.
func BuildVocab(text string, n int) (Vocab, error) {
	if n < 0 {
		return Vocab{}, fmt.Errorf("build vocab: negative merge count %d", n)
	}
	enc := byteEncoder()
	v := Vocab{}
	ids := map[string]int{}
	add := func(tok string, typ int32) {
		if _, ok := ids[tok]; ok {
			return
		}
		ids[tok] = len(v.Tokens)
		v.Tokens = append(v.Tokens, tok)
		v.Types = append(v.Types, typ)
	}
	for _, tok := range controlTokens() {
		add(tok, tokenTypeControl)
	}
	for b := range 256 {
		add(string(enc[b]), tokenTypeNormal)
	}

	// Each distinct piece is a word: a slice of symbols, with its count in the text.
	counts := map[string]int{}
	var order []string
	for _, piece := range pretokenize.FindAllString(text, -1) {
		var sb strings.Builder
		for _, b := range []byte(piece) {
			sb.WriteRune(enc[b])
		}
		w := sb.String()
		if counts[w] == 0 {
			order = append(order, w)
		}
		counts[w]++
	}
	words := make([][]string, len(order))
	for i, w := range order {
		for _, r := range w {
			words[i] = append(words[i], string(r))
		}
	}

	for len(v.Merges) < n {
		left, right, ok := bestPair(words, order, counts)
		if !ok {
			return Vocab{}, fmt.Errorf("build vocab: text offers only %d of %d merges", len(v.Merges), n)
		}
		v.Merges = append(v.Merges, left+" "+right)
		add(left+right, tokenTypeNormal)
		for i := range words {
			words[i] = applyMerge(words[i], left, right)
		}
	}
	return v, nil
}

// bestPair returns the most frequent adjacent symbol pair; ties go to the pair that sorts
// first, so the result never depends on map order.
func bestPair(words [][]string, order []string, counts map[string]int) (string, string, bool) {
	type pair struct{ l, r string }
	freq := map[pair]int{}
	for i, w := range words {
		for j := 0; j+1 < len(w); j++ {
			freq[pair{w[j], w[j+1]}] += counts[order[i]]
		}
	}
	var best pair
	bestN := 0
	for p, c := range freq {
		if c > bestN || (c == bestN && p.l+" "+p.r < best.l+" "+best.r) {
			best, bestN = p, c
		}
	}
	return best.l, best.r, bestN > 0
}

// applyMerge joins every left,right neighbour pair in w, left to right.
func applyMerge(w []string, left, right string) []string {
	out := w[:0:0]
	for i := 0; i < len(w); i++ {
		if i+1 < len(w) && w[i] == left && w[i+1] == right {
			out = append(out, left+right)
			i++
			continue
		}
		out = append(out, w[i])
	}
	return out
}

// byteEncoder is GPT-2's byte-to-unicode table: printable bytes stand for themselves, the
// others are shifted above U+00FF so every token is printable text without spaces.
func byteEncoder() [256]rune {
	var enc [256]rune
	direct := func(b int) bool {
		return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
	}
	next := rune(256)
	for b := range 256 {
		if direct(b) {
			enc[b] = rune(b)
		} else {
			enc[b] = next
			next++
		}
	}
	return enc
}

// Bytes decodes a token's text back to the bytes it stands for. ok is false for control
// tokens and for text outside GPT-2's byte alphabet.
func (v Vocab) Bytes(id int) (b []byte, ok bool) {
	if id < 0 || id >= len(v.Tokens) || v.Types[id] == tokenTypeControl {
		return nil, false
	}
	enc := byteEncoder()
	for _, r := range v.Tokens[id] {
		i := slices.Index(enc[:], r)
		if i < 0 {
			return nil, false
		}
		b = append(b, byte(i))
	}
	return b, true
}

// ID returns the id of a token, or -1.
func (v Vocab) ID(tok string) int {
	return slices.Index(v.Tokens, tok)
}
