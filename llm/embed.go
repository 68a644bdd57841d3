package llm

import (
	"context"
	"fmt"
)

// EmbeddingRole is the role Embed uses.
const EmbeddingRole = "embedding"

// embedBatch is how many texts go in one embedding request.
const embedBatch = 64

// Embed returns one vector per text from the "embedding" role's model, in
// batches, with the same retries, concurrency limit and accounting as Chat.
func (r *Router) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ro, err := r.role(EmbeddingRole)
	if err != nil {
		return nil, err
	}
	start := r.clock.Now()
	out := make([][]float32, 0, len(texts))
	total := Usage{}
	for i := 0; i < len(texts); i += embedBatch {
		batch := texts[i:min(i+embedBatch, len(texts))]
		if !ro.isLocal {
			batch = redactStrings(batch)
		}
		var vecs [][]float32
		_, _, err := r.withRetry(ctx, ro, func(actx context.Context) (Response, error) {
			v, u, err := ro.prov.embed(actx, batch)
			if err != nil {
				return Response{}, err
			}
			vecs = v
			total = total.Add(u)
			return Response{}, nil
		})
		if err != nil {
			return nil, fmt.Errorf("embed texts %d-%d of %d: %w", i+1, i+len(batch), len(texts), err)
		}
		out = append(out, vecs...)
	}
	total.Elapsed = r.clock.Now().Sub(start)
	r.account(Request{Role: EmbeddingRole, Label: EmbeddingRole}, total)
	return out, nil
}

func redactStrings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Redact(s)
	}
	return out
}

// Check says whether role can be served, without spending tokens: for Ollama
// the server answers (/api/version) and has the model (/api/show); for
// OpenRouter a key is set; for another OpenAI-compatible server it answers
// /models and lists the model. The error is an *Error whose Hint says the fix.
func (r *Router) Check(ctx context.Context, role string) error {
	ro, err := r.role(role)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, min(ro.timeout, checkTimeout))
	defer cancel()
	if err := ro.prov.check(actx); err != nil {
		e := r.finish(ctx, ro, err)
		if ctx.Err() == nil && actx.Err() != nil {
			e.Kind, e.Hint = KindTimeout, "the server did not answer within "+checkTimeout.String()
		}
		return e
	}
	return nil
}
