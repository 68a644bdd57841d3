package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// openaiProvider talks to OpenRouter or any OpenAI-compatible server through
// go-openai, with a transport that keeps what go-openai drops.
type openaiProvider struct {
	spec      RoleSpec
	transport http.RoundTripper
}

func newOpenAI(spec RoleSpec, hc *http.Client, appName, appURL string) (*openaiProvider, error) {
	if spec.BaseURL != "" {
		u, err := url.Parse(spec.BaseURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("base_url %q is not an http(s) URL", spec.BaseURL)
		}
	}
	tr := transportOf(hc)
	if spec.Provider == ProviderOpenRouter {
		tr = &headerTransport{base: tr, headers: map[string]string{"HTTP-Referer": appURL, "X-Title": appName}}
	}
	return &openaiProvider{spec: spec, transport: tr}, nil
}

// client is a per-call go-openai client whose transport records the response.
func (p *openaiProvider) client() (*openai.Client, *capture) {
	cap := &capture{}
	cfg := openai.DefaultConfig(p.spec.APIKey)
	if p.spec.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(p.spec.BaseURL, "/")
	}
	cfg.HTTPClient = capturingClient(p.transport, cap)
	return openai.NewClientWithConfig(cfg), cap
}

func (p *openaiProvider) needsKey() error {
	if p.spec.Provider == ProviderOpenRouter && p.spec.APIKey == "" {
		return &Error{Kind: KindAuth, Err: errors.New("no OpenRouter API key configured")}
	}
	return nil
}

// orUsage is OpenAI's usage plus OpenRouter's cost.
type orUsage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Cost             float64 `json:"cost"`
}

// orExtra is what OpenRouter adds to OpenAI's shapes: cost, the upstream
// provider, and errors inside a 200 reply.
type orExtra struct {
	Provider string   `json:"provider"`
	Usage    *orUsage `json:"usage"`
	Error    *orError `json:"error"`
}

type orError struct {
	Code     any    `json:"code"`
	Message  string `json:"message"`
	Metadata struct {
		ProviderName string   `json:"provider_name"`
		Raw          any      `json:"raw"`
		Reasons      []string `json:"reasons"`
	} `json:"metadata"`
}

func (e *orError) describe() string {
	msg := e.Message
	if e.Metadata.ProviderName != "" {
		msg = e.Metadata.ProviderName + ": " + msg
	}
	if e.Metadata.Raw != nil {
		raw, _ := e.Metadata.Raw.(string)
		if raw == "" {
			b, _ := json.Marshal(e.Metadata.Raw)
			raw = string(b)
		}
		msg += " (" + textutil.Clip(raw, 300) + ")"
	}
	return msg
}

func (p *openaiProvider) request(req Request) openai.ChatCompletionRequest {
	creq := openai.ChatCompletionRequest{Model: p.spec.Model, Messages: toOpenAIMessages(req.Messages)}
	creq.MaxCompletionTokens = replyTokens(req.MaxTokens, p.spec.MaxTokens)
	t := req.Temperature
	if t == nil {
		t = p.spec.Temperature
	}
	if t != nil {
		creq.Temperature = float32(*t)
		if *t == 0 {
			// go-openai omits a zero temperature; the smallest non-zero
			// value is the documented way to send "0".
			creq.Temperature = math.SmallestNonzeroFloat32
		}
	}
	creq.Seed = req.Seed
	for _, tl := range req.Tools {
		params := tl.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		creq.Tools = append(creq.Tools, openai.Tool{Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: tl.Name, Description: tl.Description, Parameters: params}})
	}
	if len(req.Schema) > 0 {
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "reply", Schema: req.Schema},
		}
	}
	return creq
}

func (p *openaiProvider) chat(ctx context.Context, req Request) (Response, error) {
	if err := p.needsKey(); err != nil {
		return Response{}, err
	}
	creq := p.request(req)
	start := time.Now()
	if p.spec.NoStream {
		return p.whole(ctx, creq, req, start)
	}
	return p.stream(ctx, creq, req, start)
}

func (p *openaiProvider) whole(ctx context.Context, creq openai.ChatCompletionRequest, req Request, start time.Time) (Response, error) {
	c, cap := p.client()
	out, err := c.CreateChatCompletion(ctx, creq)
	if err != nil {
		return Response{}, p.classify(err, cap, req)
	}
	var extra orExtra
	_ = json.Unmarshal(cap.Body(), &extra)
	if extra.Error != nil || len(out.Choices) == 0 {
		msg := "no choices in the reply"
		if extra.Error != nil {
			msg = extra.Error.describe()
		}
		return Response{}, &Error{Kind: KindServer, Status: cap.Status(), Retriable: true, Err: errors.New(msg)}
	}
	ch := out.Choices[0]
	if ch.FinishReason == "error" {
		return Response{}, &Error{Kind: KindServer, Status: cap.Status(), Retriable: true, Err: errors.New("the provider reported finish_reason \"error\"")}
	}
	resp := Response{Content: ch.Message.Content, Model: out.Model, Provider: p.spec.Provider, DoneReason: string(ch.FinishReason),
		Usage: Usage{Calls: 1, PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens, GenDuration: time.Since(start)}}
	if extra.Usage != nil {
		resp.Usage.CostUSD = extra.Usage.Cost
	}
	for i, tc := range ch.Message.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: toolID(tc.ID, i), Name: tc.Function.Name, Arguments: jsonArgs(tc.Function.Arguments)})
	}
	if resp.Model == "" {
		resp.Model = p.spec.Model
	}
	return resp, nil
}

// streamChunk is a chunk as go-openai decodes it, plus OpenRouter's extras
// (fields at this level shadow the embedded ones of the same name).
type streamChunk struct {
	openai.ChatCompletionStreamResponse
	Provider string   `json:"provider"`
	Usage    *orUsage `json:"usage"`
	Error    *orError `json:"error"`
}

func (p *openaiProvider) stream(ctx context.Context, creq openai.ChatCompletionRequest, req Request, start time.Time) (Response, error) {
	creq.Stream = true
	creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	c, cap := p.client()
	st, err := c.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return Response{}, p.classify(err, cap, req)
	}
	defer st.Close()
	resp := Response{Model: p.spec.Model, Provider: p.spec.Provider, Usage: Usage{Calls: 1}}
	var content strings.Builder
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	chunks := 0
	m := newMeter(ctx, req, p.spec.Model, 0, 0)
	defer m.done()
	// A request without max_tokens gets the server's default: lemmings
	// still bounds what it reads.
	m.budget = cmp.Or(creq.MaxCompletionTokens, unsetReplyBound)
	cut := func() (Response, error) {
		resp.Content, resp.DoneReason = content.String(), "length"
		resp.Usage.CompletionTokens = max(resp.Usage.CompletionTokens, m.tokens)
		resp.Usage.GenDuration = time.Since(start)
		return resp, &Error{Kind: KindRunaway, Status: cap.Status(), Err: m.budgetError()}
	}
	for {
		raw, err := st.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, p.classify(err, cap, req)
		}
		chunks++
		var ch streamChunk
		if err := json.Unmarshal(raw, &ch); err != nil {
			return Response{}, &Error{Kind: KindBadResponse, Status: cap.Status(), Retriable: true,
				Err: fmt.Errorf("unreadable stream chunk %s: %w", textutil.Clip(string(raw), 120), err)}
		}
		if ch.Model != "" {
			resp.Model = ch.Model
		}
		if ch.Usage != nil {
			resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.CostUSD = ch.Usage.PromptTokens, ch.Usage.CompletionTokens, ch.Usage.Cost
			if ch.Usage.CompletionTokens > replyLimit(m.budget) {
				return cut() // the server's own count says it ran past
			}
		}
		for _, choice := range ch.Choices {
			m.chunk(choice.Delta.Content + choice.Delta.ReasoningContent)
			content.WriteString(choice.Delta.Content)
			for j, tc := range choice.Delta.ToolCalls {
				idx := j
				if tc.Index != nil {
					idx = *tc.Index
				}
				for len(calls) <= idx {
					calls = append(calls, &partial{})
				}
				pc := calls[idx]
				if tc.ID != "" {
					pc.id = tc.ID
				}
				if tc.Function.Name != "" {
					pc.name = tc.Function.Name
				}
				pc.args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason == "error" || ch.Error != nil {
				msg := "the provider reported finish_reason \"error\" mid-stream"
				if ch.Error != nil {
					msg = "mid-stream error: " + ch.Error.describe()
				}
				return Response{}, &Error{Kind: KindServer, Status: cap.Status(), Retriable: true, Err: errors.New(msg)}
			}
			if choice.FinishReason != "" {
				resp.DoneReason = string(choice.FinishReason)
			}
		}
		if m.overBudget() {
			return cut()
		}
	}
	// go-openai reports a stream that simply stops as a normal end: only the
	// raw bytes tell whether data: [DONE] arrived.
	if chunks == 0 && !looksLikeSSE(cap.Body()) {
		return Response{}, &Error{Kind: KindBadResponse, Status: cap.Status(), Retriable: true,
			Err: fmt.Errorf("the reply is not an event stream: %q", textutil.Clip(string(cap.Body()), 120))}
	}
	if !bytes.Contains(cap.Tail(), []byte("[DONE]")) {
		return Response{}, &Error{Kind: KindStreamCut, Status: cap.Status(), Retriable: true,
			Err: fmt.Errorf("the stream ended without data: [DONE] after %d bytes of content", content.Len())}
	}
	resp.Content = content.String()
	for i, pc := range calls {
		if pc.name == "" {
			continue
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: toolID(pc.id, i), Name: pc.name, Arguments: jsonArgs(pc.args.String())})
	}
	resp.Usage.GenDuration = time.Since(start)
	return resp, nil
}

func (p *openaiProvider) embed(ctx context.Context, texts []string) ([][]float32, Usage, error) {
	if err := p.needsKey(); err != nil {
		return nil, Usage{}, err
	}
	c, cap := p.client()
	start := time.Now()
	out, err := c.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: texts, Model: openai.EmbeddingModel(p.spec.Model)})
	if err != nil {
		return nil, Usage{}, p.classify(err, cap, Request{})
	}
	if len(out.Data) != len(texts) {
		return nil, Usage{}, &Error{Kind: KindBadResponse, Retriable: true, Err: fmt.Errorf("asked for %d embeddings, got %d", len(texts), len(out.Data))}
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(vecs) {
			return nil, Usage{}, &Error{Kind: KindBadResponse, Retriable: true, Err: fmt.Errorf("embedding index %d out of range", d.Index)}
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, Usage{Calls: 1, PromptTokens: out.Usage.PromptTokens, GenDuration: time.Since(start)}, nil
}

// check: OpenRouter needs only a key (no call is spent); another
// OpenAI-compatible server must answer /models and list the model when it
// lists any.
func (p *openaiProvider) check(ctx context.Context) error {
	if err := p.needsKey(); err != nil {
		return err
	}
	if p.spec.Provider == ProviderOpenRouter {
		return nil
	}
	c, cap := p.client()
	list, err := c.ListModels(ctx)
	if err != nil {
		return p.classify(err, cap, Request{})
	}
	if len(list.Models) == 0 {
		return nil
	}
	ids := make([]string, len(list.Models))
	for i, m := range list.Models {
		if sameModel(m.ID, p.spec.Model) {
			return nil
		}
		ids[i] = m.ID
	}
	slices.Sort(ids)
	shown := ids
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(ids)-10))
	}
	return &Error{Kind: KindModelNotFound, Status: http.StatusOK,
		Err:  fmt.Errorf("the server lists %d models, none of them %q: %s", len(ids), p.spec.Model, strings.Join(shown, ", ")),
		Hint: "set the role's model to a name the server lists, or load the model on that server"}
}

// sameModel reports whether the server's model id names the configured
// model as the server resolves names: Ollama (and servers copying its
// naming) lists "name:latest" for a model asked for as "name", and compares
// names without regard to case.
func sameModel(listed, wanted string) bool {
	if strings.EqualFold(listed, wanted) {
		return true
	}
	return strings.EqualFold(withDefaultTag(listed), withDefaultTag(wanted))
}

// withDefaultTag appends ":latest" to a model name without a tag (the tag
// follows the last colon after the last slash: "host:port/ns/name" has none).
func withDefaultTag(name string) string {
	base := name[strings.LastIndex(name, "/")+1:]
	if strings.Contains(base, ":") {
		return name
	}
	return name + ":latest"
}

// classify turns a go-openai error into an *Error, recovering OpenRouter's
// error metadata from the raw body.
func (p *openaiProvider) classify(err error, cap *capture, req Request) error {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status, msg := 0, ""
	switch {
	case errors.As(err, &apiErr):
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
		if status == 0 {
			// An error event inside a 200 stream.
			if code, ok := apiErr.Code.(int); ok && code >= 400 {
				kind, retry := statusKind(code)
				return &Error{Kind: kind, Status: code, Retriable: retry || code >= 500, Err: fmt.Errorf("mid-stream error: %s", msg)}
			}
			return &Error{Kind: KindServer, Status: cap.Status(), Retriable: true, Err: fmt.Errorf("mid-stream error: %s", msg)}
		}
	case errors.As(err, &reqErr):
		status, msg = reqErr.HTTPStatusCode, strings.TrimSpace(string(reqErr.Body))
		if msg == "" {
			msg = http.StatusText(status)
		}
	default:
		if te, ok := transportError(err); ok {
			return te
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return &Error{Kind: KindBadResponse, Status: cap.Status(), Retriable: true, Err: fmt.Errorf("unreadable reply: %s", textutil.Clip(err.Error(), 200))}
	}
	var env struct {
		Error *orError `json:"error"`
	}
	if json.Unmarshal(cap.Body(), &env) == nil && env.Error != nil {
		msg = env.Error.describe()
	}
	kind, retry := statusKind(status)
	lower := strings.ToLower(msg)
	switch {
	case len(req.Tools) > 0 && (status == http.StatusBadRequest || status == http.StatusNotFound) && strings.Contains(lower, "tool"):
		kind, retry = KindToolsUnsupported, false
	case status == http.StatusForbidden && (strings.Contains(lower, "moderation") || strings.Contains(lower, "flagged")):
		kind = KindBadRequest
	}
	return &Error{Kind: kind, Status: status, Retriable: retry, RetryAfter: parseRetryAfter(cap.Header(), time.Now()), Err: errors.New(textutil.Clip(msg, 400))}
}

func toOpenAIMessages(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for i, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: toolID(tc.ID, i), Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: args}})
		}
		out = append(out, om)
	}
	return out
}

func toolID(id string, i int) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("call_%d", i+1)
}

// jsonArgs turns a tool call's argument string into JSON, repairing it when
// a model sent something close to JSON, and {} when nothing is there.
func jsonArgs(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	if b, err := ExtractJSON(s); err == nil {
		return b
	}
	b, _ := json.Marshal(s)
	return b
}

// looksLikeSSE reports whether every non-empty line of b is an SSE field or
// comment.
func looksLikeSSE(b []byte) bool {
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		if !bytes.HasPrefix(line, []byte("data:")) && !bytes.HasPrefix(line, []byte("event:")) &&
			!bytes.HasPrefix(line, []byte("id:")) && !bytes.HasPrefix(line, []byte("retry:")) {
			return false
		}
	}
	return true
}
