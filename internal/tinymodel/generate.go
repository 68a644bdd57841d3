// Package tinymodel writes tiny llama-architecture GGUF models with random weights, and the
// Modelfiles that turn them into a chat model (with tools), a chat model without tools and
// an embedding model. The real Ollama server loads them and answers noise quickly: enough
// to test a client against the server's real wire behaviour (docs/testing-real-ollama.md).
package tinymodel

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lemmings-dev/lemmings/internal/atomicfile"
)

// File names Generate writes in its folder.
const (
	ChatGGUFName  = "tiny.gguf"       // completion weights, shared by both chat models
	EmbedGGUFName = "tiny-embed.gguf" // the same weights with mean pooling
)

// Kinds lists the three models in a fixed order.
func Kinds() []Kind { return []Kind{Chat, ChatNoTools, Embed} }

// ModelfileName is the file name Generate gives the Modelfile of kind k.
func ModelfileName(k Kind) string { return k.String() + ".Modelfile" }

// Set is what Generate wrote: absolute paths of the weights and of one Modelfile per kind.
type Set struct {
	Dir        string
	ChatGGUF   string
	EmbedGGUF  string
	Modelfiles map[Kind]string
}

// Generate writes the two GGUF files and three Modelfiles into dir (created if missing).
// The same seed gives byte-identical files.
func Generate(dir string, seed uint64) (Set, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Set{}, fmt.Errorf("generate tiny models: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return Set{}, fmt.Errorf("generate tiny models: %w", err)
	}
	vocab, err := DefaultVocab()
	if err != nil {
		return Set{}, fmt.Errorf("generate tiny models: %w", err)
	}
	s := Set{
		Dir:        abs,
		ChatGGUF:   filepath.Join(abs, ChatGGUFName),
		EmbedGGUF:  filepath.Join(abs, EmbedGGUFName),
		Modelfiles: map[Kind]string{},
	}
	chat := DefaultConfig(seed)
	if err := WriteGGUF(s.ChatGGUF, chat, vocab); err != nil {
		return Set{}, fmt.Errorf("generate tiny models: %w", err)
	}
	embed := DefaultConfig(seed)
	embed.Name = "lemmings-tiny-embed"
	embed.Embedding = true
	if err := WriteGGUF(s.EmbedGGUF, embed, vocab); err != nil {
		return Set{}, fmt.Errorf("generate tiny models: %w", err)
	}
	for _, k := range Kinds() {
		weights := ChatGGUFName
		if k == Embed {
			weights = EmbedGGUFName
		}
		text, err := Modelfile(k, weights)
		if err != nil {
			return Set{}, fmt.Errorf("generate tiny models: %w", err)
		}
		path := filepath.Join(abs, ModelfileName(k))
		if err := atomicfile.WriteFile(path, []byte(text), 0o644); err != nil {
			return Set{}, fmt.Errorf("generate tiny models: %w", err)
		}
		s.Modelfiles[k] = path
	}
	return s, nil
}
