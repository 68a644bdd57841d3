package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// ollamaProvider talks to an Ollama server through its own Go client.
type ollamaProvider struct {
	spec      RoleSpec
	base      *url.URL
	transport http.RoundTripper
	keepAlive *api.Duration
	models    *modelCache
	key       string // server|model, for the shared model cache
}

func newOllama(spec RoleSpec, hc *http.Client, models *modelCache) (*ollamaProvider, error) {
	u, err := url.Parse(spec.BaseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("base_url %q is not an http(s) URL", spec.BaseURL)
	}
	ka, err := parseKeepAlive(spec.KeepAlive)
	if err != nil {
		return nil, err
	}
	return &ollamaProvider{spec: spec, base: u, transport: transportOf(hc), keepAlive: &api.Duration{Duration: ka},
		models: models, key: u.String() + "|" + spec.Model}, nil
}

// client is a per-call API client whose transport records the response.
func (p *ollamaProvider) client() (*api.Client, *capture) {
	cap := &capture{}
	return api.NewClient(p.base, capturingClient(p.transport, cap)), cap
}

// info reads the model's maximum context and capabilities once (/api/show).
func (p *ollamaProvider) info(ctx context.Context) (modelInfo, error) {
	if i, ok := p.models.get(p.key); ok {
		return i, nil
	}
	c, cap := p.client()
	show, err := c.Show(ctx, &api.ShowRequest{Model: p.spec.Model})
	if err != nil {
		cerr := p.classify(err, cap)
		var e *Error
		if errors.As(cerr, &e) && showMissing(e) {
			// A server or proxy without /api/show: go on without knowing
			// the model's maximum (the estimate alone sizes the window).
			p.models.put(p.key, modelInfo{})
			return modelInfo{}, nil
		}
		return modelInfo{}, cerr
	}
	i := modelInfo{contextLength: contextLength(show.ModelInfo)}
	for _, c := range show.Capabilities {
		i.capabilities = append(i.capabilities, string(c))
	}
	p.models.put(p.key, i)
	return i, nil
}

// showMissing reports whether a failed /api/show means the endpoint is
// missing (a proxy that forwards only chat) rather than the model: Ollama's
// own 404 names the model, a router's "404 page not found" does not.
func showMissing(e *Error) bool {
	switch {
	case e.Kind == KindModelNotFound:
		return !strings.Contains(strings.ToLower(e.Err.Error()), "model")
	case e.Status == http.StatusMethodNotAllowed || e.Status == http.StatusNotImplemented:
		return true
	}
	return false
}

func (p *ollamaProvider) chat(ctx context.Context, req Request) (Response, error) {
	info, err := p.info(ctx)
	if err != nil {
		return Response{}, err
	}
	reply := cmp.Or(replyTokens(req.MaxTokens, p.spec.MaxTokens), defaultReplyTokens)
	promptTokens := countMessages(req.Messages, req.Tools)
	if len(req.Schema) > 0 {
		// Some templates render the format into the prompt; count it.
		promptTokens += CountTokens(string(req.Schema))
	}
	w, werr := sizeWindow(promptTokens, reply, p.spec.NumCtx, p.spec.MaxNumCtx, info.contextLength, max(p.models.lastWindow(p.key), expectWindow(req.Expect)))
	if werr != nil {
		return Response{}, werr
	}
	resp, truncated, err := p.chatWindow(ctx, req, w, promptTokens)
	if truncated {
		// The estimate was too low for this model's tokenizer. With room to
		// grow, try once more with the largest window allowed.
		limit := windowLimit(info.contextLength, p.spec.MaxNumCtx)
		if p.spec.NumCtx == 0 && limit > w.numCtx {
			spent := resp.Usage
			w.numCtx = limit
			resp, truncated, err = p.chatWindow(ctx, req, w, promptTokens)
			resp.Usage = resp.Usage.Add(spent)
		}
		if truncated {
			err = &Error{Kind: KindContextTooLarge, PromptTokens: resp.Usage.PromptTokens, Window: w.numCtx,
				Err: fmt.Errorf("the server evaluated %d prompt tokens, the whole window of %d: the prompt was truncated (estimated at %d tokens)",
					resp.Usage.PromptTokens, w.numCtx, promptTokens)}
			resp = Response{}
		}
	}
	return resp, err
}

// chatWindow makes one request with window w. truncated reports that the
// server evaluated a whole window of prompt: it cut the prompt to fit.
func (p *ollamaProvider) chatWindow(ctx context.Context, req Request, w window, promptTokens int) (Response, bool, error) {
	opts := maps.Clone(p.spec.Options)
	if opts == nil {
		opts = map[string]any{}
	}
	opts["num_ctx"] = w.numCtx
	opts["num_predict"] = w.numPredict
	if t := req.Temperature; t != nil {
		opts["temperature"] = *t
	} else if t := p.spec.Temperature; t != nil {
		opts["temperature"] = *t
	}
	if _, set := opts["seed"]; !set && req.Seed != nil {
		opts["seed"] = *req.Seed
	}
	if req.Variation > 0 {
		vary(opts, req.Variation)
	}
	if len(req.Stop) > 0 {
		opts["stop"] = req.Stop
	}
	// A new window reloads the model, and its cache with it.
	if p.models.lastWindow(p.key) != w.numCtx {
		p.models.forget(p.key)
	}
	held := cacheText(req.Messages, req.Prefill)
	share := p.models.cachedShare(p.key, held)
	read := int(float64(promptTokens) * (1 - share))
	watchdogOf(ctx).expectFirst(firstTokenWait(read, p.models.prefillRate(p.key), 0))
	msgs := toOllamaMessages(req.Messages)
	if req.Prefill != "" {
		// A last assistant message is continued, not answered.
		msgs = append(msgs, api.Message{Role: "assistant", Content: req.Prefill})
	}
	stream := !p.spec.NoStream
	creq := &api.ChatRequest{
		Model: p.spec.Model, Messages: msgs, Stream: &stream,
		KeepAlive: p.keepAlive, Options: opts, Tools: toOllamaTools(req.Tools),
	}
	if len(req.Schema) > 0 {
		creq.Format = req.Schema
	}
	var content strings.Builder
	var calls []ToolCall
	var final *api.ChatResponse
	c, cap := p.client()
	m := newMeter(ctx, req, p.spec.Model, promptTokens, w.numCtx)
	m.budget = w.numPredict
	err := c.Chat(ctx, creq, func(cr api.ChatResponse) error {
		m.chunk(cr.Message.Content + cr.Message.Thinking)
		content.WriteString(cr.Message.Content)
		calls = append(calls, fromOllamaCalls(cr.Message.ToolCalls, len(calls))...)
		if cr.Done {
			final = &cr
			return nil
		}
		if m.overBudget() {
			return errOverBudget // closing the stream stops the server's generation
		}
		if strings.Contains(cr.Message.Content, "\n") && looping(content.String()) {
			return errLooping // closing the stream stops the server's generation
		}
		return nil
	})
	m.done()
	if errors.Is(err, errLooping) {
		p.models.forget(p.key)
		// What the call cost is kept; the partial text goes back with the
		// error so a caller can say what went wrong.
		resp := Response{Content: content.String(), Model: p.spec.Model, Provider: ProviderOllama, DoneReason: string(StopLooping), NumCtx: w.numCtx,
			Usage: Usage{Calls: 1, PromptTokens: promptTokens, CompletionTokens: m.tokens}}
		return resp, false, &Error{Kind: KindRunaway, Status: cap.Status(),
			Err: fmt.Errorf("the reply repeated the same lines %d times in a row after %d tokens: stopped (%q…)", repeatTimes, m.tokens, textutil.Clip(content.String(), 60))}
	}
	if errors.Is(err, errOverBudget) {
		// Cut and counted: what arrived is what the call cost.
		resp := Response{Content: content.String(), Model: p.spec.Model, Provider: ProviderOllama, DoneReason: "length", NumCtx: w.numCtx,
			Usage: Usage{Calls: 1, PromptTokens: promptTokens, CompletionTokens: m.tokens}}
		return resp, false, &Error{Kind: KindRunaway, Status: cap.Status(), Err: m.budgetError()}
	}
	if err != nil {
		p.models.forget(p.key)
		return Response{}, false, p.classify(err, cap)
	}
	if final == nil {
		p.models.forget(p.key)
		if st := cap.Status(); st >= 400 {
			return Response{}, false, p.statusError(st, http.StatusText(st), cap)
		}
		if cap.ReadErr() == nil && (strings.TrimSpace(content.String()) != "" || len(calls) > 0) {
			// The server answered 200 and sent content, then stopped without
			// its end line: it cut off a model that would not stop (measured
			// on v0.11.4 with a token-repeating model). The network is fine;
			// the same request would run away the same way.
			return Response{}, false, &Error{Kind: KindRunaway, Status: cap.Status(),
				Err: fmt.Errorf("the server stopped the reply without done:true after %d bytes of content (%q…)", content.Len(), textutil.Clip(content.String(), 60))}
		}
		return Response{}, false, &Error{Kind: KindStreamCut, Status: cap.Status(), Retriable: true,
			Err: fmt.Errorf("the reply ended without done:true after %d bytes of content: %v", content.Len(), cmp.Or(cap.ReadErr(), io.EOF))}
	}
	p.models.setWindow(p.key, w.numCtx)
	cached := int(float64(final.PromptEvalCount) * share)
	p.models.notePrefill(p.key, final.PromptEvalCount-cached, final.PromptEvalDuration)
	p.models.hold(p.key, held+content.String())
	text := content.String()
	if req.Prefill != "" && !strings.HasPrefix(text, req.Prefill) {
		text = req.Prefill + text
	}
	resp := Response{
		Content: text, ToolCalls: calls, Model: p.spec.Model, Provider: ProviderOllama,
		DoneReason: final.DoneReason, NumCtx: w.numCtx,
		Usage: Usage{Calls: 1, PromptTokens: final.PromptEvalCount, CompletionTokens: final.EvalCount, GenDuration: final.EvalDuration,
			PromptDuration: final.PromptEvalDuration, PromptCached: cached},
	}
	return resp, final.PromptEvalCount >= w.numCtx, nil
}

// vary changes the sampling for re-ask number n after a runaway reply: a new
// seed, a repeat penalty and a little more temperature, so the model does
// not walk the same path again (at temperature 0 a seed alone changes
// nothing).
func vary(opts map[string]any, n int) {
	seed := 0
	if v, ok := opts["seed"].(int); ok {
		seed = v
	}
	opts["seed"] = seed + 7919*n
	penalty := 1.0
	if v, ok := opts["repeat_penalty"].(float64); ok {
		penalty = v
	}
	opts["repeat_penalty"] = max(penalty, 1.0+0.15*float64(n))
	temp := 0.8 // Ollama's default
	if v, ok := opts["temperature"].(float64); ok {
		temp = v
	}
	opts["temperature"] = min(temp+0.3*float64(n), 1.5)
}

func (p *ollamaProvider) embed(ctx context.Context, texts []string) ([][]float32, Usage, error) {
	c, cap := p.client()
	start := time.Now()
	resp, err := c.Embed(ctx, &api.EmbedRequest{Model: p.spec.Model, Input: texts, KeepAlive: p.keepAlive})
	if err != nil {
		return nil, Usage{}, p.classify(err, cap)
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, Usage{}, &Error{Kind: KindBadResponse, Retriable: true,
			Err: fmt.Errorf("asked for %d embeddings, got %d", len(texts), len(resp.Embeddings))}
	}
	return resp.Embeddings, Usage{Calls: 1, PromptTokens: resp.PromptEvalCount, GenDuration: time.Since(start)}, nil
}

// check says whether the server answers and has the model.
func (p *ollamaProvider) check(ctx context.Context) error {
	c, cap := p.client()
	if _, err := c.Version(ctx); err != nil {
		return p.classify(err, cap)
	}
	_, err := p.info(ctx)
	return err
}

// classify turns an Ollama client error into an *Error.
func (p *ollamaProvider) classify(err error, cap *capture) error {
	var se api.StatusError
	if errors.As(err, &se) {
		return p.statusError(se.StatusCode, se.ErrorMessage, cap)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return &Error{Kind: KindAuth, Status: ae.StatusCode, Err: err}
	}
	if te, ok := transportError(err); ok {
		return te
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || !bodyIsJSONLines(cap.Body()) {
		return &Error{Kind: KindBadResponse, Status: cap.Status(), Retriable: true,
			Err: fmt.Errorf("unreadable reply: %s", textutil.Clip(err.Error(), 200))}
	}
	// A {"error": …} line inside a 200 stream: the runner failed mid-reply,
	// or (a bad format) the request was refused once the model was loaded.
	if refusedRequest(err.Error()) {
		return &Error{Kind: KindBadRequest, Status: cap.Status(), Err: fmt.Errorf("error in stream: %s", textutil.Clip(err.Error(), 300)), Hint: refusedHint}
	}
	return &Error{Kind: KindServer, Status: cap.Status(), Retriable: true, Err: fmt.Errorf("error in stream: %s", textutil.Clip(err.Error(), 300))}
}

func (p *ollamaProvider) statusError(status int, msg string, cap *capture) *Error {
	kind, retry := statusKind(status)
	hint := ""
	switch {
	case status == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
		kind = KindToolsUnsupported
	case status >= 500 && refusedRequest(msg):
		// Ollama answers 500 to a wrongly typed option or a bad format: the
		// same request would fail the same way, so it is not retried.
		kind, retry, hint = KindBadRequest, false, refusedHint
	}
	return &Error{Kind: kind, Status: status, Retriable: retry, RetryAfter: parseRetryAfter(cap.Header(), time.Now()),
		Err: errors.New(textutil.Clip(msg, 300)), Hint: hint}
}

// refusedHint is the fix for a request Ollama refused with a 500.
const refusedHint = "Ollama refused the request itself (an option of the wrong type, or the format): check the role's options in your configuration"

// refusedRequest reports whether an Ollama error message refuses the request
// itself (measured on v0.11.4: `option "top_k" must be of type integer`,
// `invalid format: …`, `invalid JSON schema in format`) rather than a fault
// of the server that a retry may not meet.
func refusedRequest(msg string) bool {
	return strings.HasPrefix(msg, "option \"") && strings.Contains(msg, " must be of ") ||
		strings.HasPrefix(msg, "invalid format: ") || msg == "invalid JSON schema in format"
}

// bodyIsJSONLines reports whether every non-empty line of b is JSON.
func bodyIsJSONLines(b []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), maxCapture)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) > 0 && !json.Valid(line) {
			return false
		}
	}
	return true
}

func toOllamaMessages(msgs []Message) []api.Message {
	names := map[string]string{} // tool call id → tool name, for tool_name
	out := make([]api.Message, 0, len(msgs))
	for _, m := range msgs {
		om := api.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for i, tc := range m.ToolCalls {
			var args api.ToolCallFunctionArguments
			if err := json.Unmarshal(tc.Arguments, &args); err != nil {
				args = api.NewToolCallFunctionArguments()
			}
			om.ToolCalls = append(om.ToolCalls, api.ToolCall{ID: tc.ID, Function: api.ToolCallFunction{Index: i, Name: tc.Name, Arguments: args}})
			if tc.ID != "" {
				names[tc.ID] = tc.Name
			}
		}
		if m.Role == "tool" {
			om.ToolName = names[m.ToolCallID]
		}
		out = append(out, om)
	}
	return out
}

func toOllamaTools(tools []Tool) api.Tools {
	var out api.Tools
	for _, t := range tools {
		var params api.ToolFunctionParameters
		if len(t.Parameters) == 0 || json.Unmarshal(t.Parameters, &params) != nil {
			params = api.ToolFunctionParameters{Type: "object"}
		}
		if params.Type == "" {
			params.Type = "object"
		}
		if params.Properties == nil {
			params.Properties = api.NewToolPropertiesMap()
		}
		out = append(out, api.Tool{Type: "function", Function: api.ToolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out
}

func fromOllamaCalls(tcs []api.ToolCall, offset int) []ToolCall {
	var out []ToolCall
	for i, tc := range tcs {
		args, err := json.Marshal(tc.Function.Arguments)
		if err != nil {
			args = []byte("{}")
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", offset+i+1)
		}
		out = append(out, ToolCall{ID: id, Name: tc.Function.Name, Arguments: args})
	}
	return out
}
