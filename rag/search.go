package rag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Filter narrows a search.
type Filter struct {
	Kind string // KindCode, KindKnowledge, or "" for both
}

// Method is a retrieval method.
type Method string

// Retrieval methods. Hybrid, the default, fuses the vector and keyword
// rankings by reciprocal rank; it was the best of the three on the labelled
// questions of rag/testdata/eval (see docs/knowledge.md).
const (
	Hybrid  Method = "hybrid"
	Vector  Method = "vector"
	Keyword Method = "keyword"
)

// Hit is one search result: a chunk of a file.
type Hit struct {
	Path      string  `json:"path"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Score     float64 `json:"score"` // hybrid: fused reciprocal rank; vector: cosine; keyword: BM25
	Kind      string  `json:"kind"`
	Language  string  `json:"language,omitempty"`
	Context   string  `json:"context,omitempty"` // declaration or heading path
	Snippet   string  `json:"snippet"`           // the lines that best match the query
	Content   string  `json:"-"`                 // the whole chunk
}

// rrfK is the constant of reciprocal-rank fusion (Cormack et al. 2009): a
// chunk's fused score is the sum over rankings of 1/(rrfK + rank).
const rrfK = 60

// Search returns the k chunks that best answer query, fusing vector and
// keyword rankings.
func (ix *Index) Search(ctx context.Context, query string, k int, f Filter) ([]Hit, error) {
	return ix.SearchWith(ctx, query, k, f, Hybrid)
}

// SearchWith searches with a given method.
func (ix *Index) SearchWith(ctx context.Context, query string, k int, f Filter, m Method) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("rag: search: empty query")
	}
	if k <= 0 {
		k = 10
	}
	switch f.Kind {
	case "", KindCode, KindKnowledge:
	default:
		return nil, fmt.Errorf("rag: search: unknown kind %q (want %s or %s)", f.Kind, KindCode, KindKnowledge)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.cat == nil {
		return nil, errors.New("rag: search: index is closed")
	}
	depth := max(k*5, 50)
	type cand struct {
		score   float64
		content string
		got     bool
	}
	scores := map[string]*cand{}
	var order []string
	add := func(id string, s float64) {
		c, ok := scores[id]
		if !ok {
			c = &cand{}
			scores[id] = c
			order = append(order, id)
		}
		c.score += s
	}

	if m != Hybrid && m != Vector && m != Keyword {
		return nil, fmt.Errorf("rag: search: unknown method %q", m)
	}
	// The keyword ranking (SQLite, one thread) runs beside the vector one
	// (chromem-go, all CPUs).
	type kwResult struct {
		rids []int64
		bm   []float64
		err  error
	}
	kwc := make(chan kwResult, 1)
	if m == Hybrid || m == Keyword {
		go func() {
			rids, bm, err := ix.cat.keywordSearch(ctx, query, f.Kind, depth)
			kwc <- kwResult{rids, bm, err}
		}()
	}
	if m == Hybrid || m == Vector {
		res, err := ix.vectorSearch(ctx, query, depth, f)
		if err != nil {
			if m == Hybrid {
				<-kwc
			}
			return nil, err
		}
		rank := 0
		for _, r := range res {
			if _, ok := ix.byID[r.ID]; !ok {
				continue
			}
			rank++
			if m == Vector {
				add(r.ID, float64(r.Similarity))
			} else {
				add(r.ID, 1/float64(rrfK+rank))
			}
			scores[r.ID].content, scores[r.ID].got = r.Content, true
		}
	}
	if m == Hybrid || m == Keyword {
		kw := <-kwc
		if kw.err != nil {
			return nil, fmt.Errorf("rag: %w", kw.err)
		}
		rank := 0
		for i, rid := range kw.rids {
			meta, ok := ix.byRID[rid]
			if !ok {
				continue
			}
			rank++
			if m == Keyword {
				add(meta.id, kw.bm[i])
			} else {
				add(meta.id, 1/float64(rrfK+rank))
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int {
		ma, mb := ix.byID[a], ix.byID[b]
		return cmp.Or(cmp.Compare(scores[b].score, scores[a].score), cmp.Compare(ma.path, mb.path), cmp.Compare(ma.startLine, mb.startLine))
	})
	if len(order) > k {
		order = order[:k]
	}
	hits := make([]Hit, 0, len(order))
	for _, id := range order {
		meta, c := ix.byID[id], scores[id]
		if !c.got {
			doc, err := ix.col.GetByID(ctx, id)
			if err != nil {
				continue // catalog entry without vector: the next Update repairs it
			}
			c.content = doc.Content
		}
		hits = append(hits, Hit{Path: meta.path, StartLine: meta.startLine, EndLine: meta.endLine, Score: c.score,
			Kind: meta.kind, Language: meta.lang, Context: meta.context, Snippet: snippet(c.content, query), Content: c.content})
	}
	return hits, nil
}

func (ix *Index) vectorSearch(ctx context.Context, query string, n int, f Filter) ([]chromemResult, error) {
	count := ix.col.Count()
	if count == 0 {
		return nil, nil
	}
	vs, err := ix.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("rag: embed query with %s: %w", ix.emb.Name(), err)
	}
	if len(vs) != 1 || len(vs[0]) != ix.emb.Dimensions() {
		return nil, fmt.Errorf("rag: embedder %s returned a malformed query vector", ix.emb.Name())
	}
	var where map[string]string
	if f.Kind != "" {
		where = map[string]string{"kind": f.Kind}
	}
	res, err := ix.col.QueryEmbedding(ctx, vs[0], min(n, count), where, nil)
	if err != nil {
		return nil, fmt.Errorf("rag: vector search: %w", err)
	}
	out := make([]chromemResult, len(res))
	for i, r := range res {
		out[i] = chromemResult{ID: r.ID, Content: r.Content, Similarity: r.Similarity}
	}
	return out, nil
}

type chromemResult struct {
	ID         string
	Content    string
	Similarity float32
}

// snippet picks the (up to) three consecutive lines of content that contain
// the most query words, dedented and clipped.
func snippet(content, query string) string {
	want := map[string]bool{}
	words(query, func(w string, _ bool) {
		if !isStop(w) && len(w) > 1 {
			want[stem(w)] = true
		}
	})
	lines := strings.Split(content, "\n")
	score := make([]int, len(lines))
	for i, l := range lines {
		words(l, func(w string, _ bool) {
			if want[stem(w)] {
				score[i]++
			}
		})
	}
	best, bestScore := 0, -1
	for i := range lines {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		s := 0
		for j := i; j < min(i+3, len(lines)); j++ {
			s += score[j]
		}
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	win := lines[best:min(best+3, len(lines))]
	indent := -1
	for _, l := range win {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := make([]string, 0, len(win))
	for _, l := range win {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		l = strings.TrimRight(l, " \t")
		if r := []rune(l); len(r) > 160 {
			l = string(r[:160]) + "…"
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}
