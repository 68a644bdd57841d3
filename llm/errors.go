package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrorKind says what went wrong with a model call, so callers can act on it.
type ErrorKind string

// Error kinds. Retriable ones are retried by the Router before it gives up.
const (
	KindUnavailable      ErrorKind = "unavailable"       // server unreachable: refused, DNS, reset (retried)
	KindAuth             ErrorKind = "auth"              // 401/403: missing or bad key
	KindQuota            ErrorKind = "quota"             // 402: no credit left
	KindModelNotFound    ErrorKind = "model_not_found"   // 404: model not pulled / no such model
	KindRateLimited      ErrorKind = "rate_limited"      // 429 (retried, Retry-After honoured)
	KindServer           ErrorKind = "server"            // 5xx or an error reported inside a 200 stream (retried)
	KindBadRequest       ErrorKind = "bad_request"       // 400 and other refusals of the request itself
	KindTimeout          ErrorKind = "timeout"           // the role's timeout elapsed (retried)
	KindStreamCut        ErrorKind = "stream_cut"        // the reply ended before its end marker (retried)
	KindRunaway          ErrorKind = "runaway"           // the server stopped a reply after content without its end marker: a degenerate reply, not a network fault (not retried here; Structured re-asks with varied sampling)
	KindBadResponse      ErrorKind = "bad_response"      // a reply that could not be decoded (retried)
	KindContextTooLarge  ErrorKind = "context_too_large" // the prompt cannot fit the model's window
	KindCanceled         ErrorKind = "canceled"          // the caller's context ended
	KindToolsUnsupported ErrorKind = "tools_unsupported" // the model refuses native tools (the Router falls back)
)

// Error is a failed model call. Hint tells the user what to do about it.
type Error struct {
	Kind       ErrorKind
	Role       string
	Provider   string
	Model      string
	Status     int // HTTP status, 0 when there was no response
	Retriable  bool
	RetryAfter time.Duration // the server's Retry-After, when it sent one
	Hint       string
	// PromptTokens and Window give the numbers of a KindContextTooLarge error.
	PromptTokens, Window int
	Err                  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("llm")
	if e.Role != "" {
		fmt.Fprintf(&b, " %s", e.Role)
	}
	if e.Provider != "" || e.Model != "" {
		fmt.Fprintf(&b, " (%s %s)", e.Provider, e.Model)
	}
	fmt.Fprintf(&b, ": %s", e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " [HTTP %d]", e.Status)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, " — %s", e.Hint)
	}
	return b.String()
}

// Unwrap returns the underlying error (context.Canceled, a net error…).
func (e *Error) Unwrap() error { return e.Err }

// StructuredError is a reply that stayed unusable after the re-ask: not JSON,
// JSON that does not match the schema, cut off at the reply limit, or a
// runaway. The node can log it and move on.
type StructuredError struct {
	Raw      string // the last reply, as the model sent it
	Problem  string // why it was rejected (extraction or validation message)
	Attempts int    // model calls made (2 after a re-ask)
	// Stop is why the last reply ended: StopLength means Raw is cut off and
	// must not be acted on (no edit blocks taken from it, no file written).
	Stop StopReason
	// Tokens is the last reply's length in tokens when it was cut off.
	Tokens int
}

// TruncatedError is a reply cut off at the reply-token limit (after the
// re-ask when one was made): its end is missing, so it is never acted on.
type TruncatedError struct {
	Tokens int    // the reply's length in tokens (the limit it hit)
	Raw    string // the cut reply
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("llm: the reply was cut off at %d tokens (the reply limit)", e.Tokens)
}

// CutOff reports whether err is a reply cut at the length limit (a
// *TruncatedError, or a *StructuredError whose last reply was cut), and at
// how many tokens.
func CutOff(err error) (int, bool) {
	var te *TruncatedError
	if errors.As(err, &te) {
		return te.Tokens, true
	}
	var se *StructuredError
	if errors.As(err, &se) && se.Stop == StopLength {
		return se.Tokens, true
	}
	return 0, false
}

// Runaway reports whether err is a reply the server stopped without its end
// marker after content (KindRunaway), directly or after the re-ask.
func Runaway(err error) bool {
	var e *Error
	if errors.As(err, &e) && e.Kind == KindRunaway {
		return true
	}
	var se *StructuredError
	return errors.As(err, &se) && se.Stop == StopRunaway
}

// ModelFault says whether err is the model's failure to answer usefully (bad
// JSON after the re-ask, a prompt that cannot fit its window, a runaway reply)
// rather than a system fault such as a server that is down: a workflow
// absorbs the first kind; the second fails the step.
func ModelFault(err error) bool {
	var se *StructuredError
	return errors.As(err, &se) || TooLarge(err) || Runaway(err)
}

// TooLarge says whether err is a prompt over the model's context window.
func TooLarge(err error) bool {
	var le *Error
	return errors.As(err, &le) && le.Kind == KindContextTooLarge
}

func (e *StructuredError) Error() string {
	raw := e.Raw
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return fmt.Sprintf("llm: structured reply unusable after %d attempts: %s (reply: %q)", e.Attempts, e.Problem, raw)
}

// hints for the user, by provider and kind.
func hint(kind ErrorKind, provider, model, role string) string {
	local := provider == ProviderOllama
	switch kind {
	case KindUnavailable:
		if local {
			return "start a server: `ollama serve` (Ollama, from ollama.com), or `make local-model` in lemmings' checkout (builds one for this CPU, installs a Qwen coder and sets lemmings up for it); or set OLLAMA_HOST to where one runs. `lemmings doctor` checks the setup"
		}
		if provider == ProviderOpenAI {
			return "start the OpenAI-compatible server or fix the role's base_url"
		}
		return "check the network connection"
	case KindModelNotFound:
		if local {
			return fmt.Sprintf("run `ollama pull %s`", model)
		}
		return fmt.Sprintf("check the model name %q of role %s", model, role)
	case KindAuth:
		if provider == ProviderOpenRouter {
			return "set OPENROUTER_API_KEY to a valid OpenRouter key"
		}
		return fmt.Sprintf("set a valid api_key for role %s", role)
	case KindQuota:
		return "top up your OpenRouter credit (or lower max_tokens)"
	case KindRateLimited:
		return "the provider is rate-limiting; wait, lower cloud concurrency, or add credit"
	case KindTimeout:
		return fmt.Sprintf("raise the timeout of role %s or use a smaller model", role)
	case KindStreamCut:
		return "the server stopped mid-reply; check its log (out of memory? crashed runner?)"
	case KindRunaway:
		return fmt.Sprintf("the model %s repeated itself until the server stopped it; a larger or better model, or a higher temperature, avoids it", model)
	case KindServer:
		if local {
			return "check the Ollama server log"
		}
		return "the provider failed; try again later or pick another model"
	case KindContextTooLarge:
		return "shorten the prompt (smaller knowledge budget, fewer files) or use a model with a larger context window"
	}
	return ""
}
