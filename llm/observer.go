package llm

import (
	"cmp"
	"context"
	"time"
)

// CallRecord is one chat call as an observer sees it once it has ended:
// what was sent (redacted already when the role is not local), what came
// back, and how the role was configured.
type CallRecord struct {
	Start    time.Time
	End      time.Time
	Role     string
	Label    string
	Provider string // ollama | openrouter | openai
	Model    string // the model asked for; Response.Model is the one that answered
	BaseURL  string
	Local    bool
	// Stream: the reply was asked for as a stream.
	Stream bool
	// MaxTokens is the reply budget sent; 0 when the server's default applies.
	MaxTokens   int
	Temperature *float64
	Request     Request
	Response    Response
	Err         error
	// Redacted is the call's texts with secrets removed when the router
	// already has them (it keeps a prompt log); nil otherwise.
	Redacted *RedactedCall
}

// RedactedCall is a call's texts with secrets removed, as the prompt log
// writes them.
type RedactedCall struct {
	Messages  []Message
	Reply     string
	ToolCalls []ToolCall
}

// redactCall redacts what a call sent and what came back.
func redactCall(req Request, resp Response) RedactedCall {
	red := RedactedCall{Messages: redactMessages(req.Messages), Reply: Redact(resp.Content)}
	if len(resp.ToolCalls) > 0 {
		red.ToolCalls = redactMessages([]Message{{ToolCalls: resp.ToolCalls}})[0].ToolCalls
	}
	return red
}

// CallObserver sees every chat call a Router makes under a context that
// carries it (WithCallObserver). ObserveCall runs on the caller's goroutine
// after the call, so it must be quick; it must not keep the record's slices.
type CallObserver interface {
	ObserveCall(ctx context.Context, c CallRecord)
}

type observerKey struct{}

// WithCallObserver returns a context whose chat calls o sees. Tracing uses
// it: the observer travels with the work (a node, a supervisor job), so each
// call can be placed under what made it.
func WithCallObserver(ctx context.Context, o CallObserver) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// observe tells the context's observer, if any, about a call that ended.
func (r *Router) observe(ctx context.Context, start time.Time, ro *role, sent Request, resp Response, err error, redacted *RedactedCall) {
	o, _ := ctx.Value(observerKey{}).(CallObserver)
	if o == nil {
		return
	}
	var red *RedactedCall
	if redacted != nil {
		c := *redacted // the caller's stays on its stack when nobody observes
		red = &c
	}
	temp := sent.Temperature
	if temp == nil {
		temp = ro.spec.Temperature
	}
	maxTokens := cmp.Or(sent.MaxTokens, ro.spec.MaxTokens)
	if maxTokens == 0 && ro.spec.Provider == ProviderOllama {
		maxTokens = defaultReplyTokens // what the Ollama provider sends; OpenAI's servers use their own
	}
	o.ObserveCall(ctx, CallRecord{
		Start: start, End: start.Add(resp.Elapsed), Role: ro.name, Label: sent.Label,
		Provider: ro.spec.Provider, Model: ro.spec.Model, BaseURL: ro.spec.BaseURL, Local: ro.isLocal,
		Stream: !ro.spec.NoStream, MaxTokens: maxTokens,
		Temperature: temp, Request: sent, Response: resp, Err: err, Redacted: red,
	})
}
