package rag

import "context"

// Embedder turns texts into vectors. Every vector of one embedder has
// Dimensions elements; Name identifies the model so that an index never mixes
// vectors of two embedders (the llm router satisfies this for Ollama).
type Embedder interface {
	Name() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
