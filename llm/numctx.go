package llm

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
)

// minNumCtx is the smallest window sent: Ollama's own default is often 2048
// or 4096, and a tiny window buys nothing.
const minNumCtx = 2048

// promptOverhead is what a call adds to its composed messages: per-message
// framing and the JSON schema of a structured reply.
const promptOverhead = 512

// minReplyTokens is the least reply budget a tight window may shrink to.
const minReplyTokens = 256

// modelInfo is what /api/show says about a model, read once per model.
type modelInfo struct {
	contextLength int // 0: unknown
	capabilities  []string
}

// modelCache remembers model facts and the window each model was last loaded
// with, shared by all roles on the same server.
type modelCache struct {
	mu   sync.Mutex
	info map[string]modelInfo
	last map[string]int
	// held is what each model's KV cache holds, as last sent and received
	// (kvcache.go); rate its measured prompt-reading speed.
	held map[string]string
	rate map[string]float64
}

func newModelCache() *modelCache {
	return &modelCache{info: map[string]modelInfo{}, last: map[string]int{}, held: map[string]string{}, rate: map[string]float64{}}
}

func (c *modelCache) get(key string) (modelInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.info[key]
	return i, ok
}

func (c *modelCache) put(key string, i modelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.info[key] = i
}

func (c *modelCache) lastWindow(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[key]
}

func (c *modelCache) setWindow(key string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last[key] = max(c.last[key], n)
}

// contextLength finds "<family>.context_length" in /api/show's model_info.
func contextLength(modelInfo map[string]any) int {
	for k, v := range modelInfo {
		if !strings.HasSuffix(k, ".context_length") {
			continue
		}
		switch n := v.(type) {
		case float64:
			return int(n)
		case int:
			return n
		case int64:
			return int(n)
		}
	}
	return 0
}

// window is the sizing of one Ollama call.
type window struct {
	numCtx     int // options.num_ctx
	numPredict int // options.num_predict: the reply budget, maybe shrunk
}

// sizeWindow picks num_ctx for a prompt of promptTokens and a reply budget.
// The window is rounded up to a power of two (at least 2048) and never
// shrinks below the one the model is loaded with (last), because every new
// num_ctx reloads the model. It is capped by the model's maximum and the
// user's cap. When the reply budget does not fit it shrinks, down to a
// quarter of itself (at least 256 tokens); a prompt that still cannot fit is
// a KindContextTooLarge error, never a silent truncation by the server.
// forced > 0 is the role's fixed num_ctx.
func sizeWindow(promptTokens, reply, forced, userMax, modelMax, last int) (window, *Error) {
	limit := windowLimit(modelMax, userMax)
	n := forced
	if n <= 0 {
		n = minNumCtx
		for n < promptTokens+reply {
			n *= 2
		}
		n = max(n, last)
	}
	if limit > 0 && n > limit {
		n = limit
	}
	minReply := min(reply, max(reply/4, minReplyTokens))
	switch {
	case promptTokens+reply <= n:
		return window{numCtx: n, numPredict: reply}, nil
	case promptTokens+minReply <= n:
		return window{numCtx: n, numPredict: n - promptTokens}, nil
	}
	return window{}, &Error{Kind: KindContextTooLarge, PromptTokens: promptTokens, Window: n,
		Err: fmt.Errorf("prompt of about %d tokens plus a reply of at least %d does not fit the context window of %d tokens (model maximum %s)",
			promptTokens, minReply, n, maxText(modelMax, userMax))}
}

func maxText(modelMax, userMax int) string {
	s := "unknown"
	if modelMax > 0 {
		s = fmt.Sprint(modelMax)
	}
	if userMax > 0 {
		s += fmt.Sprintf(", capped at %d by max_num_ctx", userMax)
	}
	return s
}

// expectWindow is the power-of-two window a conversation expected to reach
// tokens needs (0 for none); sizeWindow caps it like any other.
func expectWindow(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	n := minNumCtx
	for n < tokens {
		n *= 2
	}
	return n
}

// replyTokens is a call's reply budget: what the call asks for, capped by the
// role's max_tokens; the role's alone when the call asks for nothing (0: none).
func replyTokens(asked, roleMax int) int {
	switch {
	case asked <= 0:
		return roleMax
	case roleMax > 0:
		return min(asked, roleMax)
	}
	return asked
}

// windowLimit is the largest window allowed: the model's maximum, lowered
// by the user's cap; 0 when neither is known.
func windowLimit(modelMax, userMax int) int {
	if userMax > 0 && (modelMax == 0 || userMax < modelMax) {
		return userMax
	}
	return modelMax
}

// PromptLimit is the most prompt tokens (by CountTokens' estimate) a call of
// role can carry: the model's window (its maximum from /api/show, or the
// configured num_ctx / max_num_ctx) minus the smallest reply it may shrink to. 0 means no known
// limit (cloud providers, or a server that does not say). Callers size their
// prompt budgets with it so a prompt is packed rather than refused.
func (r *Router) PromptLimit(ctx context.Context, role string) (int, error) {
	ro, err := r.role(role)
	if err != nil {
		return 0, err
	}
	p, ok := ro.prov.(*ollamaProvider)
	if !ok {
		return 0, nil
	}
	info, err := p.info(ctx)
	if err != nil {
		return 0, r.finish(ctx, ro, err)
	}
	window := windowLimit(info.contextLength, p.spec.MaxNumCtx)
	if p.spec.NumCtx > 0 {
		window = p.spec.NumCtx
	}
	if window == 0 {
		return 0, nil
	}
	// A tight window shrinks the reply to this much before refusing (sizeWindow);
	// also leave room for the per-message overhead and the schema.
	reply := cmp.Or(p.spec.MaxTokens, defaultReplyTokens)
	minReply := min(reply, max(reply/4, minReplyTokens))
	return max(window-minReply-promptOverhead, minReplyTokens), nil
}

// ReserveWindow sizes a local role's context window for a run at once, for
// its largest prompt (tokens, by CountTokens' estimate) and reply: every new
// num_ctx reloads the model and drops its cache, so a run that keeps one
// window reads each shared prefix once (a window only grows, sizeWindow).
// A role with a fixed num_ctx, or not on Ollama, is left as it is.
func (r *Router) ReserveWindow(ctx context.Context, role string, tokens int) error {
	ro, err := r.role(role)
	if err != nil {
		return err
	}
	p, ok := ro.prov.(*ollamaProvider)
	if !ok || p.spec.NumCtx > 0 || tokens <= 0 {
		return nil
	}
	info, err := p.info(ctx)
	if err != nil {
		return r.finish(ctx, ro, err)
	}
	reply := cmp.Or(p.spec.MaxTokens, defaultReplyTokens)
	n := expectWindow(tokens + promptOverhead + reply)
	if limit := windowLimit(info.contextLength, p.spec.MaxNumCtx); limit > 0 {
		n = min(n, limit)
	}
	p.models.setWindow(p.key, n)
	return nil
}
