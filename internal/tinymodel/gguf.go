package tinymodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/ollama/ollama/fs/ggml"

	"github.com/lemmings-dev/lemmings/internal/atomicfile"
)

// Config describes one tiny llama-architecture model. The zero value is not usable; start
// from DefaultConfig.
type Config struct {
	Name              string // general.name
	Seed              uint64 // same seed, same vocabulary → byte-identical file
	Embedding         bool   // an embedding model: llama.pooling_type=1 (mean)
	ContextLength     int    // llama.context_length
	EmbeddingLength   int    // width of the hidden state (and of /api/embed vectors)
	BlockCount        int    // transformer layers
	FeedForwardLength int    // hidden width of each layer's MLP
	HeadCount         int    // attention heads (and key/value heads); must divide EmbeddingLength
}

// DefaultConfig returns the configuration measured to load and answer on the real server:
// 64 wide, 2 layers, 4 heads, a 4096-token context.
func DefaultConfig(seed uint64) Config {
	return Config{
		Name:              "lemmings-tiny",
		Seed:              seed,
		ContextLength:     4096,
		EmbeddingLength:   64,
		BlockCount:        2,
		FeedForwardLength: 128,
		HeadCount:         4,
	}
}

func (c Config) validate() error {
	switch {
	case c.Name == "":
		return errors.New("name is empty")
	case c.ContextLength <= 0 || c.EmbeddingLength <= 0 || c.BlockCount <= 0 ||
		c.FeedForwardLength <= 0 || c.HeadCount <= 0:
		return fmt.Errorf("sizes must be positive: %+v", c)
	case c.EmbeddingLength%c.HeadCount != 0:
		return fmt.Errorf("embedding length %d is not a multiple of head count %d", c.EmbeddingLength, c.HeadCount)
	case c.EmbeddingLength > 1<<14 || c.FeedForwardLength > 1<<16 || c.BlockCount > 64:
		return fmt.Errorf("model too large for a test model: %+v", c)
	}
	return nil
}

// GGML tensor kinds.
const (
	kindF32 = uint32(0)
	kindF16 = uint32(1)
)

// tensorData is a tensor's encoded bytes; ggml.WriteGGUF copies it to the tensor's offset.
type tensorData []byte

func (d tensorData) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(d)
	return int64(n), err
}

// WriteGGUF writes the model described by cfg with vocabulary v to path. The file appears
// complete or not at all: it is written beside path and renamed into place.
func WriteGGUF(path string, cfg Config, v Vocab) error {
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	if len(v.Tokens) == 0 || len(v.Types) != len(v.Tokens) {
		return fmt.Errorf("write gguf %s: vocabulary has %d tokens and %d types", path, len(v.Tokens), len(v.Types))
	}
	kv, err := metadata(cfg, v)
	if err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	tensors := weights(cfg, v)

	err = atomicfile.Write(path, 0o644, func(f *os.File) error { return ggml.WriteGGUF(f, kv, tensors) })
	if err != nil {
		return fmt.Errorf("write gguf: %w", err)
	}
	return nil
}

// metadata is the GGUF key/value section; integer keys are uint32 because that is the type
// the server's reader asks for.
func metadata(cfg Config, v Vocab) (ggml.KV, error) {
	id := func(tok string) (uint32, error) {
		i := v.ID(tok)
		if i < 0 {
			return 0, fmt.Errorf("vocabulary lacks %s", tok)
		}
		return uint32(i), nil
	}
	bos, err := id(TokenBOS)
	if err != nil {
		return nil, err
	}
	eos, err := id(TokenEndOfText)
	if err != nil {
		return nil, err
	}
	scores := make([]float32, len(v.Tokens))
	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           cfg.Name,
		"general.file_type":                      uint32(1), // mostly F16
		"general.quantization_version":           uint32(2),
		"llama.context_length":                   uint32(cfg.ContextLength),
		"llama.embedding_length":                 uint32(cfg.EmbeddingLength),
		"llama.block_count":                      uint32(cfg.BlockCount),
		"llama.feed_forward_length":              uint32(cfg.FeedForwardLength),
		"llama.attention.head_count":             uint32(cfg.HeadCount),
		"llama.attention.head_count_kv":          uint32(cfg.HeadCount),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(cfg.EmbeddingLength / cfg.HeadCount),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(len(v.Tokens)),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "default",
		"tokenizer.ggml.tokens":                  v.Tokens,
		"tokenizer.ggml.token_type":              v.Types,
		"tokenizer.ggml.scores":                  scores,
		"tokenizer.ggml.merges":                  v.Merges,
		"tokenizer.ggml.bos_token_id":            bos,
		"tokenizer.ggml.eos_token_id":            eos,
		"tokenizer.ggml.padding_token_id":        eos,
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
	}
	if cfg.Embedding {
		kv["llama.pooling_type"] = uint32(1)
	}
	return kv, nil
}

// weights draws every random value in one fixed order before anything is written (the
// writer copies tensors concurrently), so the same seed gives the same file.
func weights(cfg Config, v Vocab) []*ggml.Tensor {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6c656d6d696e6773)) // "lemmings"
	e, f, n := uint64(cfg.EmbeddingLength), uint64(cfg.FeedForwardLength), uint64(len(v.Tokens))

	var ts []*ggml.Tensor
	f16 := func(name string, cols, rows uint64, scale float64) []uint16 {
		vals := make([]uint16, cols*rows)
		for i := range vals {
			vals[i] = float16(float32(uniform(rng) * scale))
		}
		ts = append(ts, &ggml.Tensor{Name: name, Kind: kindF16, Shape: []uint64{cols, rows}})
		return vals
	}
	ones := func(name string) {
		data := make([]byte, 4*e)
		for i := range e {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(1))
		}
		ts = append(ts, &ggml.Tensor{Name: name, Kind: kindF32, Shape: []uint64{e}, WriterTo: tensorData(data)})
	}
	encode := func(vals []uint16) {
		data := make([]byte, 2*len(vals))
		for i, x := range vals {
			binary.LittleEndian.PutUint16(data[2*i:], x)
		}
		ts[len(ts)-1].WriterTo = tensorData(data)
	}
	// Uniform on [-a, a] has variance a²/3: a = √(3/fan_in) keeps activations near unit size.
	fan := func(in uint64) float64 { return math.Sqrt(3 / float64(in)) }

	encode(f16("token_embd.weight", e, n, 1))
	for b := range uint64(cfg.BlockCount) {
		p := fmt.Sprintf("blk.%d.", b)
		ones(p + "attn_norm.weight")
		encode(f16(p+"attn_q.weight", e, e, fan(e)))
		encode(f16(p+"attn_k.weight", e, e, fan(e)))
		encode(f16(p+"attn_v.weight", e, e, fan(e)))
		encode(f16(p+"attn_output.weight", e, e, fan(e)))
		ones(p + "ffn_norm.weight")
		encode(f16(p+"ffn_gate.weight", e, f, fan(e)))
		encode(f16(p+"ffn_up.weight", e, f, fan(e)))
		encode(f16(p+"ffn_down.weight", f, e, fan(f)))
	}
	ones("output_norm.weight")
	out := f16("output.weight", e, n, fan(e))
	// Tokens that must never be sampled get all-zero output rows: a zero logit sits mid-pack
	// among random ones, so top-k sampling leaves them out and replies stay printable.
	for id := range n {
		if silenced(v, int(id)) {
			clear(out[id*e : (id+1)*e])
		}
	}
	encode(out)
	return ts
}

// uniform draws from [-1, 1) using only PCG's specified output, so the stream of values
// cannot change with the Go release.
func uniform(rng *rand.Rand) float64 {
	return float64(rng.Uint64()>>11)/(1<<52) - 1
}

// silenced reports whether token id is kept out of sampled text: control tokens other than
// the two end tokens, and any token whose bytes are not printable ASCII or a newline.
func silenced(v Vocab, id int) bool {
	switch v.Tokens[id] {
	case TokenEnd, TokenEndOfText:
		return false
	}
	b, ok := v.Bytes(id)
	if !ok {
		return true
	}
	for _, c := range b {
		if c != '\n' && (c < 0x20 || c > 0x7e) {
			return true
		}
	}
	return false
}
