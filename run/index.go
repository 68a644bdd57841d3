package run

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/rag"
)

// Embedder is what the index needs from the llm router.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// modelEmbedder adapts the router's embedding role to rag.Embedder. Its
// dimension is learned from the first answer.
type modelEmbedder struct {
	name string
	e    Embedder
	mu   sync.Mutex
	dims int
}

func (m *modelEmbedder) Name() string { return m.name }

func (m *modelEmbedder) Dimensions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dims
}

func (m *modelEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := m.e.Embed(ctx, texts)
	if err == nil && len(vecs) > 0 {
		m.mu.Lock()
		m.dims = len(vecs[0])
		m.mu.Unlock()
	}
	return vecs, err
}

// ChooseEmbedder returns the configured embedder. When that is Ollama and it
// does not answer, it says so once and returns the offline embedder, which
// needs no model or server.
func ChooseEmbedder(ctx context.Context, c *config.Config, e Embedder, warn io.Writer) rag.Embedder {
	if c.RAG.Embedder == "offline" || e == nil {
		return rag.NewOfflineEmbedder()
	}
	role, err := c.ResolvedRole(config.RoleEmbedding)
	if err != nil {
		return rag.NewOfflineEmbedder()
	}
	// A server that is down is known at once (a refused connection needs no
	// backoff): ask it cheaply before the first embedding, which retries.
	if err := checkEmbedder(ctx, e); err != nil {
		fmt.Fprintf(warn, "warning: embedding model %s not available (%v); using the offline embedder\n", role.Model, err)
		return rag.NewOfflineEmbedder()
	}
	me := &modelEmbedder{name: role.Provider + ":" + role.Model, e: e}
	if _, err := me.Embed(ctx, []string{"lemmings"}); err != nil {
		fmt.Fprintf(warn, "warning: embedding model %s not available (%v); using the offline embedder\n", role.Model, err)
		return rag.NewOfflineEmbedder()
	}
	return me
}

// OpenIndexOffline opens the repository's retrieval index with the offline
// embedder, asking no model (lemmings --offline index). An index built with
// a model is refused, not rebuilt: its vectors would be thrown away, and the
// next run that reaches the model would rebuild it again.
func OpenIndexOffline(dir string, warn io.Writer) (*rag.Index, error) {
	if name, _, err := rag.Recorded(dir); err == nil && !rag.IsOffline(name) {
		return nil, fmt.Errorf("the index in %s was built with %s, which offline indexing does not ask: it is left as it is (lemmings index without --offline updates it, and so does a run)", dir, name)
	}
	idx, err := rag.Open(dir, rag.NewOfflineEmbedder())
	if err != nil {
		return nil, err
	}
	for _, w := range idx.Warnings {
		fmt.Fprintf(warn, "warning: %s\n", w)
	}
	return idx, nil
}

// OpenIndex opens the repository's retrieval index with the configured
// embedder, printing what the index had to repair.
func OpenIndex(ctx context.Context, dir string, c *config.Config, e Embedder, warn io.Writer) (*rag.Index, error) {
	idx, err := rag.Open(dir, ChooseEmbedder(ctx, c, e, warn))
	if err != nil {
		return nil, err
	}
	for _, w := range idx.Warnings {
		fmt.Fprintf(warn, "warning: %s\n", w)
	}
	return idx, nil
}
