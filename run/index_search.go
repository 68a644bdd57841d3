package run

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/rag"
)

// embedChecker is the router's cheap availability check (no retries, no
// tokens): a refused connection answers in a millisecond.
type embedChecker interface {
	Check(ctx context.Context, role string) error
}

func checkEmbedder(ctx context.Context, e Embedder) error {
	if c, ok := e.(embedChecker); ok {
		return c.Check(ctx, config.RoleEmbedding)
	}
	return nil
}

// OpenIndexForSearch opens an existing index with the embedder it records,
// never building or rebuilding one: with the offline embedder when it was
// built offline (no server asked), with the embedding model when it was
// built by the configured one and that answers; otherwise keyword search
// only, said once on warn. The method says how to search. An index that does
// not exist is rag.ErrNoIndex, and nothing is created.
func OpenIndexForSearch(ctx context.Context, dir string, c *config.Config, e Embedder, warn io.Writer) (*rag.Index, rag.Method, error) {
	name, dims, err := rag.Recorded(dir)
	if err != nil {
		return nil, "", err
	}
	var emb rag.Embedder
	method := rag.Hybrid
	switch {
	case rag.IsOffline(name):
		emb = rag.NewOfflineEmbedder()
	default:
		emb, err = recordedModel(ctx, name, dims, c, e)
		if err != nil {
			fmt.Fprintf(warn, "warning: %v; searching by keywords only\n", err)
			emb, method = rag.KeywordOnly(name, dims, err), rag.Keyword
		}
	}
	idx, err := rag.Open(dir, emb)
	if err != nil {
		return nil, "", err
	}
	for _, w := range idx.Warnings {
		fmt.Fprintf(warn, "warning: %s\n", w)
	}
	return idx, method, nil
}

// recordedModel is the embedding model an index was built with, asked on
// the configured embedding server when it answers: the same model when the
// configuration names it, else the index's own (a query embedded by another
// model than the chunks were would find nothing).
func recordedModel(ctx context.Context, name string, dims int, c *config.Config, e Embedder) (rag.Embedder, error) {
	role, err := c.ResolvedRole(config.RoleEmbedding)
	switch {
	case e == nil:
		return nil, fmt.Errorf("the index was built with %s, which this search cannot ask", name)
	case err != nil:
		return nil, err
	}
	model := role.Model
	if configured := role.Provider + ":" + role.Model; configured != name {
		provider, recorded, ok := strings.Cut(name, ":")
		if !ok || provider != role.Provider {
			return nil, fmt.Errorf("the index was built with %s, which the configured embedding server (%s) does not serve (lemmings index rebuilds it)", name, role.Provider)
		}
		own, err := embedderFor(c, recorded)
		if err != nil {
			return nil, err
		}
		e, model = own, recorded
	}
	if err := checkEmbedder(ctx, e); err != nil {
		return nil, fmt.Errorf("embedding model %s not available (%w)", model, err)
	}
	return &modelEmbedder{name: name, e: e, dims: dims}, nil
}

// embedderFor is the configured embedding server asked for another model.
func embedderFor(c *config.Config, model string) (*llm.Router, error) {
	cc := *c
	cc.Roles = maps.Clone(c.Roles)
	r := cc.Roles[config.RoleEmbedding]
	r.Model = model
	cc.Roles[config.RoleEmbedding] = r
	rc := RouterConfigFrom(&cc, false)
	emb, ok := rc.Roles[config.RoleEmbedding]
	if !ok {
		return nil, fmt.Errorf("no embedding role to ask %s", model)
	}
	return llm.NewRouter(llm.RouterConfig{Roles: map[string]llm.RoleSpec{config.RoleEmbedding: emb}, Retry: rc.Retry, LocalConcurrency: rc.LocalConcurrency})
}
