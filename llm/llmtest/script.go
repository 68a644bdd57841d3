package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// API names the wire protocol of a call.
type API string

// The protocols the server speaks. Any matches both in a Step.
const (
	Any    API = ""
	Ollama API = "ollama"
	OpenAI API = "openai"
)

// Message is one chat message as the server received it.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a tool call a reply makes (or a request message carries).
// Arguments is a JSON object.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Tool is a tool a request offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Call is one request the server received, decoded from its wire format.
type Call struct {
	Seq      int    // 1-based arrival order
	API      API    // Ollama or OpenAI
	Method   string // HTTP method
	Path     string // URL path, e.g. /api/chat or /v1/chat/completions
	Model    string
	Messages []Message
	// Prompt is every message's content joined by newlines: what Step.Contains
	// searches.
	Prompt string
	// Format is the JSON schema asked for: Ollama's format, or OpenAI's
	// response_format.json_schema.schema. Nil when none.
	Format json.RawMessage
	// Options are Ollama's options (num_ctx, num_predict, temperature…).
	Options     map[string]any
	NumCtx      int // options.num_ctx, 0 when absent
	KeepAlive   json.RawMessage
	MaxTokens   int // num_predict, max_tokens or max_completion_tokens
	Temperature *float64
	Tools       []Tool
	Stream      bool
	Input       []string // embedding inputs
	Header      http.Header
	Body        []byte // the raw request body
	Time        time.Time

	window int // the context window the call is answered with (Ollama chat)
}

// LastUser returns the content of the last user message, or "".
func (c Call) LastUser() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Content
		}
	}
	return ""
}

// isChat reports whether the call asks for a chat completion.
func (c Call) isChat() bool {
	return strings.HasSuffix(c.Path, "/api/chat") || strings.HasSuffix(c.Path, "/chat/completions") || isResponses(c.Path) || strings.HasSuffix(c.Path, "/v1/messages") || isGemini(c.Path)
}

// Step is one expected call of the script and its answer. A request is
// answered by the first step that is not exhausted and whose every set matcher
// matches, so calls made in parallel need no fixed order.
type Step struct {
	Name string // names the step in Unmatched reports and Steps()
	API  API    // Any, Ollama or OpenAI
	// Path restricts the step to one endpoint (suffix match, e.g. "/api/embed").
	// Empty: the chat endpoints only.
	Path     string
	Model    string          // exact model name; empty matches any
	Contains string          // substring of Call.Prompt; empty matches any
	Match    func(Call) bool // predicate; nil matches any
	// Times is how many calls the step answers: 0 once, n>0 n times, -1 forever.
	Times   int
	Reply   Reply
	Respond func(Call) Reply // computed reply; takes precedence over Reply
}

// Reply is a canned answer, in whichever wire format the call used.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
	// Embeddings answers a scripted embedding call (one vector per input).
	Embeddings [][]float32

	Status      int           // HTTP status; 0 means 200
	Body        string        // raw body sent as is (malformed bodies, custom errors)
	ContentType string        // overrides the Content-Type header
	Latency     time.Duration // wait before the response starts
	ChunkDelay  time.Duration // wait between streamed chunks
	// ChunkSize splits streamed content every ChunkSize runes; 0 splits after
	// each space, roughly one chunk per word as real servers do.
	ChunkSize int
	// CutAfterChunks > 0 aborts the connection after that many content chunks
	// (non-streaming: after half the body), as a crashed server would.
	CutAfterChunks int
	// Endless keeps streaming after the content, a new word every
	// ChunkDelay, until the client closes the stream (a server that
	// ignores the reply budget).
	Endless bool
	// NoDone ends an Ollama reply cleanly but without done:true (streaming:
	// no final line; non-streaming: "done":false and no counters), and an
	// OpenAI stream without its data: [DONE] line.
	NoDone bool
	// MidStreamError sends an error after the content chunks on a 200 stream:
	// Ollama {"error":…} line; OpenRouter chunk with finish_reason "error".
	MidStreamError string

	PromptTokens     int     // 0: estimated from the prompt
	CompletionTokens int     // 0: estimated from the reply
	Cost             float64 // OpenRouter usage.cost
	RetryAfter       time.Duration
	FinishReason     string // OpenAI finish_reason; default "stop" or "tool_calls"
	DoneReason       string // Ollama done_reason; default "stop"
	// EvalDuration is Ollama's eval_duration; 0: 10ms per completion token.
	EvalDuration time.Duration
}

// ModelInfo describes a model the fake Ollama has "pulled".
type ModelInfo struct {
	Name          string
	ContextLength int      // model_info <family>.context_length; 0 means 4096
	Capabilities  []string // default ["completion", "tools"]
	Family        string   // model_info key prefix; default "llama"
}

// matches reports whether the step answers c.
func (st *Step) matches(c Call) bool {
	if st.API != Any && st.API != c.API {
		return false
	}
	if st.Path != "" {
		if !strings.HasSuffix(c.Path, st.Path) {
			return false
		}
	} else if !c.isChat() {
		return false
	}
	if st.Model != "" && st.Model != c.Model {
		return false
	}
	if st.Contains != "" && !strings.Contains(c.Prompt, st.Contains) {
		return false
	}
	if st.Match != nil && !st.Match(c) {
		return false
	}
	return true
}

// limit is how many calls the step answers; -1 for unlimited.
func (st *Step) limit() int {
	switch {
	case st.Times < 0:
		return -1
	case st.Times == 0:
		return 1
	default:
		return st.Times
	}
}
