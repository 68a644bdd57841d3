package events

// The model calls (nodes' llm observer and accounting).

// Event names of the model calls.
const (
	KindLLMStart      = "llm_start"
	KindLLMProgress   = "llm_progress"
	KindLLMRetry      = "llm_retry"
	KindLLMCall       = "llm_call"
	KindReplyCutOff   = "reply_cut_off"
	KindReplyRunaway  = "reply_runaway"
	KindReplyUnusable = "reply_unusable"
	KindModelError    = "model_error"
	KindPromptPacked  = "prompt_packed"
)

// LLMStart: a model call began; its prompt is being evaluated.
type LLMStart struct {
	Attempt int    `json:"attempt"`
	Label   string `json:"label"`
	Model   string `json:"model"`
	// NumCtx and PromptTokens are known when the prompt's size was measured.
	NumCtx       int    `json:"num_ctx,omitempty"`
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	Role         string `json:"role"`
}

// LLMProgress: a streaming reply so far.
type LLMProgress struct {
	ElapsedMS  int64   `json:"elapsed_ms"`
	Label      string  `json:"label"`
	Model      string  `json:"model"`
	Text       string  `json:"text"` // the text streamed since the last progress event
	Tokens     int     `json:"tokens"`
	TokensPerS float64 `json:"tokens_per_s"`
}

// LLMRetry: a failed call is tried again after WaitMS.
type LLMRetry struct {
	Attempt int    `json:"attempt"`
	Error   string `json:"error"`
	Label   string `json:"label"`
	Model   string `json:"model"`
	Role    string `json:"role"`
	WaitMS  int64  `json:"wait_ms"`
}

// LLMCall: a call answered, with what it cost.
type LLMCall struct {
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	ElapsedMS        int64   `json:"elapsed_ms"`
	Label            string  `json:"label"`
	Model            string  `json:"model"`
	PromptTokens     int     `json:"prompt_tokens"`
	Provider         string  `json:"provider"`
	TokensPerS       float64 `json:"tokens_per_s,omitempty"`
}

// Reask: a reply was asked for again: cut off at the reply limit
// (reply_cut_off), run on until the server stopped it (reply_runaway), or
// unusable (reply_unusable). Name is which.
type Reask struct {
	Name    string `json:"-"`
	Label   string `json:"label"`
	Problem string `json:"problem"`
	Reasked bool   `json:"reasked"`
	Tokens  int    `json:"tokens"`
}

// ModelError: a call failed for good; Stop says when the reply was cut
// off (length, with Tokens) or ran away.
type ModelError struct {
	Error  string `json:"error"`
	Label  string `json:"label"`
	Stop   string `json:"stop,omitempty"`
	Tokens int    `json:"tokens,omitempty"`
}

// PromptPacked: a prompt was packed to its budget; Dropped names what was
// left out or cut.
type PromptPacked struct {
	Dropped []string `json:"dropped"`
	Label   string   `json:"label"`
	Tokens  int      `json:"tokens"`
}

// Kind implements Payload.
func (LLMStart) Kind() string { return KindLLMStart }

// Kind implements Payload.
func (LLMProgress) Kind() string { return KindLLMProgress }

// Kind implements Payload.
func (LLMRetry) Kind() string { return KindLLMRetry }

// Kind implements Payload.
func (LLMCall) Kind() string { return KindLLMCall }

// Kind implements Payload.
func (r Reask) Kind() string { return r.Name }

// Kind implements Payload.
func (ModelError) Kind() string { return KindModelError }

// Kind implements Payload.
func (PromptPacked) Kind() string { return KindPromptPacked }

func init() {
	register(
		func() Payload { return &LLMStart{} },
		func() Payload { return &LLMProgress{} },
		func() Payload { return &LLMRetry{} },
		func() Payload { return &LLMCall{} },
		func() Payload { return &Reask{Name: KindReplyCutOff} },
		func() Payload { return &Reask{Name: KindReplyRunaway} },
		func() Payload { return &Reask{Name: KindReplyUnusable} },
		func() Payload { return &ModelError{} },
		func() Payload { return &PromptPacked{} },
	)
}
