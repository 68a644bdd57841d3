package tinymodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/seed1.sha256 from the current generator")

// decode reads a GGUF file back with ollama's own reader.
func decode(t *testing.T, path string) (*ggml.GGML, *os.File) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	g, err := ggml.Decode(f, -1)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return g, f
}

func TestGenerateIsDeterministicPerSeed(t *testing.T) {
	a, err := Generate(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Generate(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	pairs := [][3]string{{a.ChatGGUF, b.ChatGGUF, c.ChatGGUF}, {a.EmbedGGUF, b.EmbedGGUF, c.EmbedGGUF}}
	for _, k := range Kinds() {
		pairs = append(pairs, [3]string{a.Modelfiles[k], b.Modelfiles[k], c.Modelfiles[k]})
	}
	for _, p := range pairs {
		if !bytes.Equal(read(p[0]), read(p[1])) {
			t.Errorf("%s differs between two runs with seed 1", filepath.Base(p[0]))
		}
		differs := !bytes.Equal(read(p[0]), read(p[2]))
		if isGGUF := strings.HasSuffix(p[0], ".gguf"); differs != isGGUF {
			t.Errorf("%s: seed 2 differs=%v, want %v (only weights depend on the seed)", filepath.Base(p[0]), differs, isGGUF)
		}
	}
	if bytes.Equal(read(a.ChatGGUF), read(a.EmbedGGUF)) {
		t.Error("chat and embedding files are identical")
	}
}

// TestGoldenDigest pins the bytes of seed 1 across processes and Go releases: the values
// come from PCG's specified stream, not from library distributions.
func TestGoldenDigest(t *testing.T) {
	s, err := Generate(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range []string{s.ChatGGUF, s.EmbedGGUF} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+filepath.Base(p))
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "seed1.sha256")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("seed 1 files changed:\n%s\nwant\n%s\nIf the change is intended, run go test ./internal/tinymodel -run Golden -update", got, want)
	}
}

func TestGGUFMetadataAsOllamaReadsIt(t *testing.T) {
	s, err := Generate(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := DefaultVocab()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(1)
	for _, tc := range []struct {
		path      string
		embedding bool
	}{{s.ChatGGUF, false}, {s.EmbedGGUF, true}} {
		g, _ := decode(t, tc.path)
		kv := g.KV()
		if kv.Architecture() != "llama" || kv.FileType().String() != "F16" {
			t.Errorf("%s: architecture %q, file type %v", tc.path, kv.Architecture(), kv.FileType())
		}
		checks := map[string]uint64{
			"context_length":   kv.ContextLength(),
			"embedding_length": kv.EmbeddingLength(),
			"block_count":      kv.BlockCount(),
			"head_count":       uint64(kv.Uint("attention.head_count")),
			"head_count_kv":    uint64(kv.Uint("attention.head_count_kv")),
			"rope dims":        uint64(kv.Uint("rope.dimension_count")),
			"vocab_size":       uint64(kv.Uint("vocab_size")),
		}
		want := map[string]uint64{
			"context_length": uint64(cfg.ContextLength), "embedding_length": uint64(cfg.EmbeddingLength),
			"block_count": uint64(cfg.BlockCount), "head_count": uint64(cfg.HeadCount),
			"head_count_kv": uint64(cfg.HeadCount), "rope dims": uint64(cfg.EmbeddingLength / cfg.HeadCount),
			"vocab_size": uint64(len(v.Tokens)),
		}
		for k, got := range checks {
			if got != want[k] {
				t.Errorf("%s: %s = %d, want %d", filepath.Base(tc.path), k, got, want[k])
			}
		}
		if kv.String("tokenizer.ggml.model") != "gpt2" || kv.String("tokenizer.ggml.pre") != "default" {
			t.Errorf("tokenizer %q/%q", kv.String("tokenizer.ggml.model"), kv.String("tokenizer.ggml.pre"))
		}
		if !slices.Equal(kv.Strings("tokenizer.ggml.tokens"), v.Tokens) ||
			!slices.Equal(kv.Strings("tokenizer.ggml.merges"), v.Merges) ||
			!slices.Equal(kv.Ints("tokenizer.ggml.token_type"), v.Types) {
			t.Errorf("%s: vocabulary does not round-trip", filepath.Base(tc.path))
		}
		if bos, eos := kv.Uint("tokenizer.ggml.bos_token_id"), kv.Uint("tokenizer.ggml.eos_token_id"); v.Tokens[bos] != TokenBOS || v.Tokens[eos] != TokenEndOfText {
			t.Errorf("bos %d eos %d", bos, eos)
		}
		if !kv.Bool("tokenizer.ggml.add_bos_token") || kv.Bool("tokenizer.ggml.add_eos_token", true) {
			t.Error("add_bos_token must be true and add_eos_token false")
		}
		_, pooled := kv["llama.pooling_type"]
		if pooled != tc.embedding || (pooled && kv.Uint("pooling_type") != 1) {
			t.Errorf("%s: pooling_type present=%v value=%d, want present=%v value 1", filepath.Base(tc.path), pooled, kv.Uint("pooling_type"), tc.embedding)
		}
	}
}

func TestGGUFTensors(t *testing.T) {
	s, err := Generate(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	v, err := DefaultVocab()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(3)
	e, ff, n := uint64(cfg.EmbeddingLength), uint64(cfg.FeedForwardLength), uint64(len(v.Tokens))
	want := map[string][]uint64{
		"token_embd.weight": {e, n}, "output_norm.weight": {e}, "output.weight": {e, n},
	}
	for b := range cfg.BlockCount {
		p := "blk." + string(rune('0'+b)) + "."
		for name, shape := range map[string][]uint64{
			"attn_norm.weight": {e}, "attn_q.weight": {e, e}, "attn_k.weight": {e, e}, "attn_v.weight": {e, e},
			"attn_output.weight": {e, e}, "ffn_norm.weight": {e}, "ffn_gate.weight": {e, ff},
			"ffn_up.weight": {e, ff}, "ffn_down.weight": {ff, e},
		} {
			want[p+name] = shape
		}
	}

	g, f := decode(t, s.ChatGGUF)
	tensors := g.Tensors()
	got := map[string]*ggml.Tensor{}
	for _, tt := range tensors.Items() {
		got[tt.Name] = tt
	}
	if len(got) != len(want) {
		t.Errorf("%d tensors, want %d", len(got), len(want))
	}
	read := func(tt *ggml.Tensor) []byte {
		buf := make([]byte, tt.Size())
		if _, err := f.ReadAt(buf, int64(tensors.Offset+tt.Offset)); err != nil {
			t.Fatalf("read %s: %v", tt.Name, err)
		}
		return buf
	}
	for name, shape := range want {
		tt, ok := got[name]
		if !ok {
			t.Errorf("missing tensor %s", name)
			continue
		}
		if !slices.Equal(tt.Shape, shape) {
			t.Errorf("%s: shape %v, want %v", name, tt.Shape, shape)
		}
		isNorm := len(shape) == 1
		if wantKind := map[bool]uint32{true: kindF32, false: kindF16}[isNorm]; tt.Kind != wantKind {
			t.Errorf("%s: kind %d, want %d", name, tt.Kind, wantKind)
		}
		data := read(tt)
		if isNorm {
			for i := 0; i < len(data); i += 4 {
				if x := math.Float32frombits(binary.LittleEndian.Uint32(data[i:])); x != 1 {
					t.Fatalf("%s[%d] = %v, want 1", name, i/4, x)
				}
			}
		} else if bytes.Count(data, []byte{0}) > len(data)*3/4 {
			t.Errorf("%s is mostly zeros", name)
		}
	}

	// Output rows: zero exactly for the silenced tokens.
	out := read(got["output.weight"])
	rowBytes := int(e) * 2
	for id := range int(n) {
		row := out[id*rowBytes : (id+1)*rowBytes]
		zero := bytes.Count(row, []byte{0}) == len(row)
		if zero != silenced(v, id) {
			t.Errorf("token %d %q: zero row %v, silenced %v", id, v.Tokens[id], zero, silenced(v, id))
		}
	}
}

func TestSilencedTokens(t *testing.T) {
	v, err := DefaultVocab()
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]bool{
		TokenEnd: false, TokenEndOfText: false, TokenBOS: true, TokenUser: true, TokenAssistant: true,
		"a": false, "{": false, "Ċ": false /* newline */, "ĉ": true /* tab */, "Ā": true /* NUL */, "ÿ": true, "Ġ": false, /* space */
	} {
		id := v.ID(tok)
		if id < 0 {
			t.Fatalf("no token %q", tok)
		}
		if got := silenced(v, id); got != want {
			t.Errorf("silenced(%q) = %v, want %v", tok, got, want)
		}
	}
}

func TestWriteGGUFRefusesBadInput(t *testing.T) {
	v, err := DefaultVocab()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := DefaultConfig(1)
	bad.HeadCount = 3
	noName := DefaultConfig(1)
	noName.Name = ""
	huge := DefaultConfig(1)
	huge.EmbeddingLength = 1 << 20
	noBOS := v
	noBOS.Tokens = slices.Clone(v.Tokens)
	noBOS.Tokens[0] = "<bos>"
	for name, tc := range map[string]struct {
		cfg   Config
		vocab Vocab
		path  string
	}{
		"heads that do not divide the width": {bad, v, filepath.Join(dir, "a.gguf")},
		"an empty name":                      {noName, v, filepath.Join(dir, "b.gguf")},
		"a model too large for a test":       {huge, v, filepath.Join(dir, "c.gguf")},
		"an empty vocabulary":                {DefaultConfig(1), Vocab{}, filepath.Join(dir, "d.gguf")},
		"a vocabulary without <s>":           {DefaultConfig(1), noBOS, filepath.Join(dir, "e.gguf")},
		"a folder that does not exist":       {DefaultConfig(1), v, filepath.Join(dir, "missing", "f.gguf")},
	} {
		if err := WriteGGUF(tc.path, tc.cfg, tc.vocab); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed writes left files behind: %v", entries)
	}
}

func TestGenerateLeavesOnlyItsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "folder")
	s, err := Generate(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if info, _ := e.Info(); info.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v", e.Name(), info.Mode())
		}
	}
	want := []string{"chat.Modelfile", "embed.Modelfile", "notools.Modelfile", "tiny-embed.gguf", "tiny.gguf"}
	if !slices.Equal(names, want) {
		t.Fatalf("files %q, want %q", names, want)
	}
	if !filepath.IsAbs(s.Dir) || filepath.Dir(s.ChatGGUF) != s.Dir {
		t.Errorf("set paths not absolute in its folder: %+v", s)
	}
}
