package llm

import (
	"strings"
	"time"
)

// What an Ollama server's KV cache holds, as lemmings can know it: the
// server keeps the last prompt and reply of a loaded model and reads only
// what follows the longest common prefix with the next prompt (v0.11.4
// still reports the whole prompt in prompt_eval_count, its time shows the
// reuse). lemmings keeps the text it last sent each model, so a call's
// share served by the cache is estimated from what it sends, and the speed
// at which the server reads a prompt is measured over the part it read.

const (
	// unknownPrefillRate is the reading speed assumed before any call has
	// measured it: a small coder on a 2-core CPU, so the wait errs long.
	unknownPrefillRate = 4.0
	// minRateSample: a call whose read part is shorter says more about the
	// server's overheads than about its speed.
	minRateSample = 128
)

// cacheText is a request's messages as the server's cache sees them: in
// order, each with its role, so two requests share a prefix where their
// rendered prompts do.
func cacheText(msgs []Message, prefill string) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|" + m.Role + "|>\n")
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	if prefill != "" {
		b.WriteString("<|assistant|>\n" + prefill)
	}
	return b.String()
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// cachedShare estimates the share of a prompt the model's cache serves: the
// prefix it shares with what the model last read and wrote, in bytes of
// the prompt's text.
func (c *modelCache) cachedShare(key, text string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if text == "" {
		return 0
	}
	return float64(commonPrefix(c.held[key], text)) / float64(len(text))
}

// hold records what the model's cache holds after a call: its prompt and
// its reply.
func (c *modelCache) hold(key, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held[key] = text
}

// forget drops what a reload (a new window) or a failed call left unknown.
func (c *modelCache) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, key)
}

// notePrefill folds one call's reading speed into the model's: the tokens
// it read (not those the cache served) over the time the server spent. The
// kept rate leans to the slower side, so waits and prompt limits err safe.
func (c *modelCache) notePrefill(key string, read int, took time.Duration) {
	if read < minRateSample || took <= 0 {
		return
	}
	rate := float64(read) / took.Seconds()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.rate[key]; ok {
		rate = min(rate, (old+rate)/2)
	}
	c.rate[key] = rate
}

// prefillRate is the model's measured reading speed in tokens per second
// (0: not measured yet).
func (c *modelCache) prefillRate(key string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate[key]
}

// PrefillRate is the measured speed at which a local role's model reads a
// prompt, in tokens per second (0: not measured yet, or not on Ollama).
func (r *Router) PrefillRate(role string) float64 {
	ro, ok := r.roles[role]
	if !ok {
		return 0
	}
	if p, ok := ro.prov.(*ollamaProvider); ok {
		return p.models.prefillRate(p.key)
	}
	return 0
}

// firstTokenWait is how long a call may wait for its first token when it
// must read read tokens: twice what reading them takes at the measured
// speed (or a slow one when none was measured), for a busy machine; never
// less than the role's timeout (floor), which covers loading the model and
// a short prompt.
func firstTokenWait(read int, rate float64, floor time.Duration) time.Duration {
	if read < minRateSample {
		return floor
	}
	if rate <= 0 {
		rate = unknownPrefillRate
	}
	return max(time.Duration(2*float64(read)/rate*float64(time.Second)), floor)
}
