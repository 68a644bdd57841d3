package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Provider names accepted in RoleSpec.Provider.
const (
	ProviderOllama     = "ollama"
	ProviderOpenRouter = "openrouter"
	ProviderOpenAI     = "openai" // any OpenAI-compatible server: vLLM, LM Studio, llama.cpp…
)

// Default endpoints and limits.
const (
	DefaultOllamaURL     = "http://127.0.0.1:11434"
	DefaultOpenRouterURL = "https://openrouter.ai/api/v1"
	defaultKeepAlive     = "30m"
	defaultReplyTokens   = 2048
	// unsetReplyBound bounds a reply whose request named no budget (an
	// OpenAI-compatible role without max_tokens: the server's default).
	unsetReplyBound     = 32768
	defaultLocalTimeout = 5 * time.Minute
	defaultCloudTimeout = 5 * time.Minute
)

// RoleSpec says which model serves a role and how.
type RoleSpec struct {
	Provider string // ollama | openrouter | openai
	Model    string
	BaseURL  string // empty: the provider's default (Ollama: http://127.0.0.1:11434)
	APIKey   string
	// NumCtx > 0 forces Ollama's context window (still checked against the
	// model's maximum); 0 sizes it per call from the prompt.
	NumCtx int
	// MaxNumCtx > 0 caps the window below the model's own maximum (memory).
	MaxNumCtx   int
	MaxTokens   int // default reply budget; 0: 2048
	Temperature *float64
	Timeout     time.Duration // longest silence of the server per request; 0: 5m local, 5m cloud
	KeepAlive   string        // Ollama keep_alive: "30m" (default), "-1" forever, "0" unload
	Options     map[string]any
	// NoStream asks for whole replies instead of streams. Streaming is the
	// default: a reply cut mid-way is then detected rather than trusted.
	NoStream bool
}

// RouterConfig configures a Router. The zero values of the numbers take the
// defaults: one local call at a time (one GPU), four cloud calls.
type RouterConfig struct {
	Roles            map[string]RoleSpec
	LocalConcurrency int
	CloudConcurrency int
	PromptLog        string // JSONL file every call is appended to, redacted; "" for none
	Retry            RetryPolicy
	AppName, AppURL  string // OpenRouter attribution (X-Title, HTTP-Referer)
}

// Option adjusts a Router for tests and embedding programs.
type Option func(*Router)

// WithHTTPClient sets the HTTP client every provider uses (its Transport is
// kept; providers wrap it).
func WithHTTPClient(c *http.Client) Option { return func(r *Router) { r.http = c } }

// WithClock sets the clock retries sleep on.
func WithClock(c Clock) Option { return func(r *Router) { r.clock = c } }

// Router sends each request to the provider of its role. Safe for concurrent
// use.
type Router struct {
	cfg    RouterConfig
	retry  RetryPolicy
	http   *http.Client
	clock  Clock
	roles  map[string]*role
	local  chan struct{}
	cloud  chan struct{}
	models *modelCache
	log    *promptLog

	noTools sync.Map // provider|model → true once a model refused native tools

	mu      sync.Mutex
	byRole  map[string]Usage
	byLabel map[string]Usage
}

// role is a configured role and its provider.
type role struct {
	name    string
	spec    RoleSpec
	prov    provider
	isLocal bool
	timeout time.Duration
}

// provider is one backend. Errors it returns are *Error with Kind, Status and
// RetryAfter set; the Router fills in the rest.
type provider interface {
	chat(ctx context.Context, req Request) (Response, error)
	embed(ctx context.Context, texts []string) ([][]float32, Usage, error)
	check(ctx context.Context) error
}

// NewRouter validates cfg and builds the providers. It opens the prompt log;
// call Close when done.
func NewRouter(cfg RouterConfig, opts ...Option) (*Router, error) {
	r := &Router{cfg: cfg, retry: cfg.Retry.withDefaults(), http: http.DefaultClient, clock: realClock{},
		roles: map[string]*role{}, models: newModelCache(), byRole: map[string]Usage{}, byLabel: map[string]Usage{}}
	for _, o := range opts {
		o(r)
	}
	if cfg.LocalConcurrency < 0 || cfg.CloudConcurrency < 0 {
		return nil, errors.New("llm: concurrency limits must not be negative")
	}
	r.local = make(chan struct{}, cmp.Or(cfg.LocalConcurrency, 1))
	r.cloud = make(chan struct{}, cmp.Or(cfg.CloudConcurrency, 4))
	var problems []error
	names := make([]string, 0, len(cfg.Roles))
	for name := range cfg.Roles {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ro, err := r.newRole(name, cfg.Roles[name])
		if err != nil {
			problems = append(problems, fmt.Errorf("role %s: %w", name, err))
			continue
		}
		r.roles[name] = ro
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("llm: invalid configuration: %w", errors.Join(problems...))
	}
	if cfg.PromptLog != "" {
		l, err := openPromptLog(cfg.PromptLog)
		if err != nil {
			return nil, err
		}
		r.log = l
	}
	return r, nil
}

func (r *Router) newRole(name string, spec RoleSpec) (*role, error) {
	if spec.Model == "" {
		return nil, errors.New("model is empty")
	}
	if spec.NumCtx < 0 || spec.MaxNumCtx < 0 || spec.MaxTokens < 0 || spec.Timeout < 0 {
		return nil, errors.New("num_ctx, max_num_ctx, max_tokens and timeout must not be negative")
	}
	ro := &role{name: name, spec: spec}
	switch spec.Provider {
	case ProviderOllama:
		if ro.spec.BaseURL == "" {
			ro.spec.BaseURL = DefaultOllamaURL
		}
		if ro.spec.KeepAlive == "" {
			ro.spec.KeepAlive = defaultKeepAlive
		}
		p, err := newOllama(ro.spec, r.http, r.models)
		if err != nil {
			return nil, err
		}
		ro.prov, ro.isLocal = p, true
	case ProviderOpenRouter, ProviderOpenAI:
		if spec.Provider == ProviderOpenRouter && ro.spec.BaseURL == "" {
			ro.spec.BaseURL = DefaultOpenRouterURL
		}
		p, err := newOpenAI(ro.spec, r.http, r.cfg.AppName, r.cfg.AppURL)
		if err != nil {
			return nil, err
		}
		ro.prov, ro.isLocal = p, spec.Provider == ProviderOpenAI && isLocalURL(ro.spec.BaseURL)
	default:
		return nil, fmt.Errorf("unknown provider %q (accepted: %s, %s, %s)", spec.Provider, ProviderOllama, ProviderOpenRouter, ProviderOpenAI)
	}
	ro.timeout = spec.Timeout
	if ro.timeout == 0 {
		ro.timeout = defaultCloudTimeout
		if ro.isLocal {
			ro.timeout = defaultLocalTimeout
		}
	}
	return ro, nil
}

// isLocalURL reports whether base points at this machine or a private
// network: such servers share the local GPU and see unredacted prompts.
func isLocalURL(base string) bool {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}

// Close closes the prompt log.
func (r *Router) Close() error {
	if r.log == nil {
		return nil
	}
	return r.log.close()
}

// Local says whether a configured role's model runs on this machine or a
// private network (it then sees unredacted prompts and costs nothing).
func (r *Router) Local(role string) bool {
	ro, ok := r.roles[role]
	return ok && ro.isLocal
}

// Roles lists the configured role names, sorted.
func (r *Router) Roles() []string {
	out := make([]string, 0, len(r.roles))
	for name := range r.roles {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func (r *Router) role(name string) (*role, error) {
	ro, ok := r.roles[name]
	if !ok {
		return nil, &Error{Kind: KindBadRequest, Role: name,
			Err:  fmt.Errorf("role %q is not configured", name),
			Hint: fmt.Sprintf("configure it (configured roles: %s)", strings.Join(r.Roles(), ", "))}
	}
	return ro, nil
}

// Chat sends req to its role's provider, retrying transient faults, and
// returns the reply. Errors are *Error (errors.As).
func (r *Router) Chat(ctx context.Context, req Request) (Response, error) {
	start := r.clock.Now()
	ro, err := r.role(req.Role)
	if err != nil {
		return Response{}, err
	}
	base := req
	if !ro.isLocal {
		// Nothing secret leaves the machine.
		base.Messages = redactMessages(req.Messages)
	}
	key := ro.spec.Provider + "|" + ro.spec.BaseURL + "|" + ro.spec.Model
	_, fallback := r.noTools.Load(key)
	sent := base
	if fallback && len(req.Tools) > 0 {
		sent = withToolPrompt(base)
	}
	if observed(ctx) {
		ctx = context.WithValue(ctx, labelKey{}, req.Label)
	}
	resp, attempts, err := r.withRetry(ctx, ro, func(actx context.Context) (Response, error) { return ro.prov.chat(actx, sent) })
	var e *Error
	if errors.As(err, &e) && e.Kind == KindToolsUnsupported && len(req.Tools) > 0 && !fallback {
		r.noTools.Store(key, true)
		sent = withToolPrompt(base)
		var more int
		resp, more, err = r.withRetry(ctx, ro, func(actx context.Context) (Response, error) { return ro.prov.chat(actx, sent) })
		attempts += more
	}
	if err == nil && len(req.Tools) > 0 && len(resp.ToolCalls) == 0 {
		// Weak models often write the call as text instead of making it.
		resp.ToolCalls = ParseToolCalls(resp.Content, req.Tools)
	}
	resp.Attempts = attempts
	resp.Elapsed = r.clock.Now().Sub(start)
	resp.Usage.Elapsed = resp.Elapsed
	if err == nil {
		r.account(req, resp.Usage)
	}
	logged := sent
	logged.Tools = req.Tools // the offered tools, also when they went into the prompt
	var red *RedactedCall    // once, for the prompt log and the observer
	if r.log != nil {
		rc := redactCall(logged, resp)
		red = &rc
		r.log.write(r.clock.Now(), ro, req.Label, logged, resp, err, red)
	}
	r.observe(ctx, start, ro, logged, resp, err, red)
	return resp, err
}

// withRetry runs fn under the role's semaphore and timeout until it succeeds,
// fails for good, or runs out of attempts.
func (r *Router) withRetry(ctx context.Context, ro *role, fn func(context.Context) (Response, error)) (Response, int, error) {
	for attempt := 1; ; attempt++ {
		began := r.clock.Now()
		resp, err := r.attempt(context.WithValue(ctx, attemptKey{}, attempt), ro, fn)
		if err == nil {
			return resp, attempt, nil
		}
		e := r.finish(ctx, ro, err)
		// A timeout, or a fault after long work (a stream cut after minutes
		// of generation), is not retried: the same request would keep the
		// run waiting as long again. Retries must not multiply the wait.
		long := r.clock.Now().Sub(began) >= longAttempt
		if !e.Retriable || e.Kind == KindTimeout || long || attempt >= r.retry.MaxAttempts {
			if long && e.Retriable && e.Kind != KindTimeout {
				e.Hint = strings.TrimPrefix(e.Hint+"; ", "; ") + fmt.Sprintf("not retried: it failed after %s of work", r.clock.Now().Sub(began).Round(time.Second))
			}
			return resp, attempt, e
		}
		d, ok := r.retry.wait(attempt, e)
		if !ok {
			e.Hint = fmt.Sprintf("the provider asks to wait %s before retrying; %s", e.RetryAfter.Round(time.Second), e.Hint)
			return resp, attempt, e
		}
		observe(ctx, Note{Kind: NoteRetry, Role: ro.name, Model: ro.spec.Model, Label: labelOf(ctx), Attempt: attempt + 1,
			Err: e.Error(), Wait: d})
		if err := r.clock.Sleep(ctx, d); err != nil {
			return resp, attempt, r.finish(ctx, ro, err)
		}
	}
}

func (r *Router) attempt(ctx context.Context, ro *role, fn func(context.Context) (Response, error)) (Response, error) {
	sem := r.cloud
	if ro.isLocal {
		sem = r.local
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	defer func() { <-sem }()
	actx, _, stop := startWatchdog(ctx, ro.timeout)
	defer stop()
	resp, err := fn(actx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errStalled) {
		return resp, &Error{Kind: KindTimeout,
			Err: fmt.Errorf("the server sent nothing for %s (the first token, or the next one): %w", ro.timeout, context.DeadlineExceeded)}
	}
	return resp, err
}

// finish turns any error into a complete *Error: the caller's cancellation
// wins over whatever the provider saw; role, provider, model and hint are
// filled in.
func (r *Router) finish(ctx context.Context, ro *role, err error) *Error {
	var e *Error
	if ctx.Err() != nil {
		e = &Error{Kind: KindCanceled, Err: ctx.Err()}
	} else if !errors.As(err, &e) {
		if te, ok := transportError(err); ok {
			e = te
		} else if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			e = &Error{Kind: KindCanceled, Err: err}
		} else {
			e = &Error{Kind: KindServer, Retriable: true, Err: err}
		}
	}
	if e.Role == "" {
		e.Role = ro.name
	}
	if e.Provider == "" {
		e.Provider = ro.spec.Provider
	}
	if e.Model == "" {
		e.Model = ro.spec.Model
	}
	if e.Hint == "" {
		e.Hint = hint(e.Kind, ro.spec.Provider, ro.spec.Model, ro.name)
	}
	return e
}

// account adds a successful call's usage to the role and label totals.
func (r *Router) account(req Request, u Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byRole[req.Role] = r.byRole[req.Role].Add(u)
	label := req.Label
	if label == "" {
		label = req.Role
	}
	r.byLabel[label] = r.byLabel[label].Add(u)
}

// Usage returns the totals per role since the Router was made.
func (r *Router) Usage() map[string]Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Usage, len(r.byRole))
	for k, v := range r.byRole {
		out[k] = v
	}
	return out
}

// UsageByLabel returns the totals per request label (the role when a request
// has no label).
func (r *Router) UsageByLabel() map[string]Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Usage, len(r.byLabel))
	for k, v := range r.byLabel {
		out[k] = v
	}
	return out
}

// parseKeepAlive turns a keep_alive setting into a duration: a Go duration,
// a number of seconds, or a negative number for "forever".
func parseKeepAlive(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 {
			return -1, nil
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("keep_alive %q: want a duration such as 30m, a number of seconds, or -1", s)
	}
	if d < 0 {
		return -1, nil
	}
	return d, nil
}

// longAttempt: a request that failed after this long is not sent again.
const longAttempt = time.Minute

// checkTimeout bounds Check: it asks cheap questions.
const checkTimeout = 10 * time.Second
