package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Message is one chat message. Role is system, user, assistant or tool; a
// tool message answers the assistant's ToolCall with the same ToolCallID.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is the model's request to run a tool. Arguments is a JSON object.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Tool describes a tool the model may call. Parameters is a JSON schema of
// an object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Request is one chat call.
type Request struct {
	Role     string // primary | summarizer | supervisor | embedding: the router key
	Label    string // who asks, for logs and accounting: "task_planner", "code_style"…
	Messages []Message
	Tools    []Tool
	// Schema asks for structured output (Structured sets it): Ollama's format,
	// OpenAI's response_format json_schema.
	Schema    json.RawMessage
	MaxTokens int // reply budget, capped by the role's MaxTokens; 0: the role's, else 2048
	// Prefill is the start of the reply, written for the model: Ollama
	// continues it (a fence opened, so a small model writes the code at
	// once instead of echoing the prompt), and the reply returned starts
	// with it. Stop ends the reply at the first of these texts (Ollama's
	// stop sequences). Other providers ignore both; the caller reads the
	// reply the same way either way.
	Prefill string
	Stop    []string
	// Expect is what the conversation this call belongs to is expected to
	// reach, prompt and replies (0: this call alone). Ollama's window is
	// sized for it at once: every new num_ctx reloads the model and
	// evaluates the whole prompt afresh.
	Expect      int
	Temperature *float64 // nil: the role's, else the server's default
	// Seed is the sampling seed when the role's options set none (nil:
	// the server's, a random one), so a draw at a raised temperature is
	// the same draw when the run is made again.
	Seed *int
	// Variation > 0 asks for different sampling than the first try, for a
	// re-ask after a runaway reply: a new seed, a repeat penalty and a
	// little more temperature, growing with Variation (Ollama).
	Variation int
}

// Response is a model's answer.
type Response struct {
	Content   string
	ToolCalls []ToolCall
	Usage     Usage
	Model     string
	Provider  string
	// DoneReason is why generation stopped: "stop", "length" (the reply
	// budget ran out), "tool_calls"…
	DoneReason string
	// Elapsed is the wall time of the call, retries and waits included.
	Elapsed time.Duration
	// NumCtx is the context window sent to Ollama (0 for other providers).
	NumCtx int
	// Attempts is how many requests the call took (1 without retries).
	Attempts int
	// Reasks lists the re-asks Structured (or Complete) made for this
	// answer, in order: why each earlier reply could not be used.
	Reasks []Reask
}

// StopReason says why a reply ended, in terms a caller acts on.
type StopReason string

const (
	// StopEnd: the model finished its reply (or made a tool call).
	StopEnd StopReason = "end"
	// StopLength: the reply was cut at the reply-token limit; its end is
	// missing, so it must never be acted on as if whole.
	StopLength StopReason = "length"
	// StopRunaway: the server stopped a reply that never ended (a weak model
	// repeating itself), without its end marker.
	StopRunaway StopReason = "runaway"
	// StopLooping: lemmings stopped a streamed reply that kept repeating
	// the same lines (llm/repeat.go).
	StopLooping StopReason = "looping"
)

// Stop says why the reply ended: "length" (Ollama's done_reason, OpenAI's
// finish_reason) is StopLength, a reply lemmings stopped for looping
// StopLooping, anything else StopEnd.
func (r Response) Stop() StopReason {
	switch r.DoneReason {
	case "length":
		return StopLength
	case string(StopLooping):
		return StopLooping
	}
	return StopEnd
}

// Reask is one reply that was not used and asked again for.
type Reask struct {
	Stop    StopReason // StopLength, StopRunaway, or StopEnd for a reply that was whole but unusable
	Tokens  int        // the reply's length in tokens, when known
	Problem string     // what was wrong with it
}

// Usage counts what calls consumed.
type Usage struct {
	Calls            int // model calls that returned a reply
	PromptTokens     int // as the server counted them
	CompletionTokens int
	CostUSD          float64       // as OpenRouter reported it; 0 elsewhere
	Elapsed          time.Duration // wall time, retries included
	// GenDuration is the time the server spent generating (Ollama's
	// eval_duration; the request time for other providers): the
	// denominator of TokensPerSecond.
	GenDuration time.Duration
	// PromptDuration is the time the server spent reading the prompt
	// (Ollama's prompt_eval_duration; 0 where the server does not say).
	PromptDuration time.Duration
	// PromptCached is the part of PromptTokens the server's cache served
	// (Ollama: lemmings' estimate from the prefix the call shared with the
	// model's last one; the server reads only the rest).
	PromptCached int
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Calls:            u.Calls + o.Calls,
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
		Elapsed:          u.Elapsed + o.Elapsed,
		GenDuration:      u.GenDuration + o.GenDuration,
		PromptDuration:   u.PromptDuration + o.PromptDuration,
		PromptCached:     u.PromptCached + o.PromptCached,
	}
}

// PromptTokensPerSecond is the prompt's reading speed: prompt tokens per
// second of PromptDuration; 0 when the server did not time it.
func (u Usage) PromptTokensPerSecond() float64 {
	if u.PromptDuration <= 0 || u.PromptTokens == 0 {
		return 0
	}
	return float64(u.PromptTokens) / u.PromptDuration.Seconds()
}

// TokensPerSecond is the generation speed: completion tokens per second of
// GenDuration (Elapsed when the server gave no generation time).
func (u Usage) TokensPerSecond() float64 {
	d := u.GenDuration
	if d <= 0 {
		d = u.Elapsed
	}
	if d <= 0 || u.CompletionTokens == 0 {
		return 0
	}
	return float64(u.CompletionTokens) / d.Seconds()
}

// Chatter is anything that answers a chat request; *Router is one, and tests
// may supply their own.
type Chatter interface {
	Chat(ctx context.Context, req Request) (Response, error)
}
