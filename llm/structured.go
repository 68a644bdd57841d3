package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// compiledSchema is a schema in the two forms a call needs: the JSON sent to
// the provider and the compiled validator.
type compiledSchema struct {
	raw json.RawMessage
	sch *validator.Schema
}

// schemaCache memoises schemas per Go type and per schema text. It is the one
// package-level variable: Structured is a free generic function with no
// receiver to hang a cache on, and it holds only pure derived data (the same
// key always yields the same schema), so sharing it is safe.
var schemaCache sync.Map // reflect.Type or string → *compiledSchema

// SchemaFor returns the JSON schema Structured sends for T: generated from the
// type (json tags name fields, fields without omitempty are required,
// `jsonschema:"enum=a,enum=b,maxLength=200"` tags add constraints), inlined
// with no $ref or $defs so Ollama can turn it into a grammar.
func SchemaFor[T any]() (json.RawMessage, error) {
	cs, err := schemaOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return cs.raw, nil
}

func schemaOf(t reflect.Type) (*compiledSchema, error) {
	if v, ok := schemaCache.Load(t); ok {
		return v.(*compiledSchema), nil
	}
	r := &jsonschema.Reflector{DoNotReference: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version = "" // no $schema: providers do not need it, the validator defaults to 2020-12
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("llm: schema for %s: %w", t, err)
	}
	cs, err := compileSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("llm: schema for %s: %w", t, err)
	}
	v, _ := schemaCache.LoadOrStore(t, cs)
	return v.(*compiledSchema), nil
}

// compileSchema compiles a caller-supplied schema, cached by its text.
func compileSchema(raw json.RawMessage) (*compiledSchema, error) {
	key := string(raw)
	if v, ok := schemaCache.Load(key); ok {
		return v.(*compiledSchema), nil
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := validator.NewCompiler()
	if err := c.AddResource("reply.json", doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile("reply.json")
	if err != nil {
		return nil, err
	}
	v, _ := schemaCache.LoadOrStore(key, &compiledSchema{raw: raw, sch: sch})
	return v.(*compiledSchema), nil
}

// Structured asks c for a T. The schema of T (or req.Schema when the caller
// set one) goes to the provider; the reply is extracted and repaired
// (ExtractJSON), validated against the schema, and decoded. An unusable reply
// gets one re-ask; a second failure is a *StructuredError:
//   - a reply that is whole but wrong: the re-ask quotes it and the problem;
//   - a reply cut off at the reply-token limit (StopLength) is never repaired
//     into a value (its end is missing): the re-ask says so and asks for a
//     smaller change;
//   - a runaway reply (KindRunaway: the server stopped a model that repeated
//     itself) is a bad reply, not a fault: the re-ask varies the sampling.
//
// The Response carries the usage of every call made, also on error (the
// tokens were spent), and Reasks says why each re-ask was made. Other errors
// of the call itself (*Error) are returned as they are.
func Structured[T any](ctx context.Context, c Chatter, req Request) (T, Response, error) {
	var zero T
	var cs *compiledSchema
	var err error
	if len(req.Schema) > 0 {
		cs, err = compileSchema(req.Schema)
	} else {
		cs, err = schemaOf(reflect.TypeFor[T]())
	}
	if err != nil {
		return zero, Response{}, err
	}
	req.Schema = cs.raw
	var (
		spent  tally
		quoted Response // the whole but unusable reply quoted in the re-ask
		next   = req
	)
	for attempt := 1; ; attempt++ {
		resp, err := c.Chat(ctx, next)
		spent.add(resp)
		if err != nil {
			var e *Error
			switch {
			case errors.As(err, &e) && e.Kind == KindRunaway:
				problem := "the reply ran on without ending until the server stopped it"
				if errors.Is(err, errOverBudget) {
					problem = e.Err.Error()
				}
				if attempt == 1 {
					spent.reask(ctx, req, Reask{Stop: StopRunaway, Problem: problem})
					next = req
					next.Variation = req.Variation + 1
					continue
				}
				return zero, spent.done(resp), &StructuredError{Problem: problem, Attempts: attempt, Stop: StopRunaway}
			case errors.As(err, &e) && e.Kind == KindContextTooLarge && quoted.Content != "":
				// The unusable reply quoted back does not fit the model's
				// window: the reply stays the model's failure, not a fault.
				return zero, spent.done(quoted), &StructuredError{Raw: quoted.Content, Problem: spent.reasks[len(spent.reasks)-1].Problem + " (no re-ask: quoting the reply back would not fit the context window)", Attempts: 1}
			}
			return zero, spent.done(resp), err
		}
		if resp.Stop() == StopLength {
			tokens := resp.Usage.CompletionTokens
			if tokens == 0 {
				tokens = next.MaxTokens
			}
			problem := fmt.Sprintf("the reply was cut off at %d tokens, the most one reply may have", tokens)
			if attempt == 1 {
				spent.reask(ctx, req, Reask{Stop: StopLength, Tokens: tokens, Problem: problem})
				next = req
				next.Messages = append(append([]Message(nil), req.Messages...),
					Message{Role: "assistant", Content: textutil.Clip(resp.Content, 300) + " [cut off]"},
					Message{Role: "user", Content: cutText(tokens, cs.raw)})
				continue
			}
			return zero, spent.done(resp), &StructuredError{Raw: resp.Content, Problem: problem, Attempts: attempt, Stop: StopLength, Tokens: tokens}
		}
		out, problem := decodeReply[T](resp.Content, cs)
		if problem == "" {
			return out, spent.done(resp), nil
		}
		if attempt == 2 {
			return zero, spent.done(resp), &StructuredError{Raw: resp.Content, Problem: problem, Attempts: attempt, Stop: StopEnd}
		}
		// One re-ask: show the model its reply and what was wrong with it.
		spent.reask(ctx, req, Reask{Stop: StopEnd, Tokens: resp.Usage.CompletionTokens, Problem: problem})
		quoted = resp
		next = req
		next.Messages = append(append([]Message(nil), req.Messages...),
			Message{Role: "assistant", Content: resp.Content},
			Message{Role: "user", Content: reaskText(problem, cs.raw)})
	}
}

func reaskText(problem string, schema json.RawMessage) string {
	if fields := requiredFields(schema); isProse(problem) && fields != "" {
		// A reply of prose is re-asked narrowly: what a small model reads
		// best is one short line of what to send, not the schema again
		// (a thousand tokens it already had and did not follow).
		return fmt.Sprintf("Your reply was text, not the JSON object asked for, so it could not be used. Reply again with only one JSON object with %s, and no other text.", fields)
	}
	return fmt.Sprintf("Your reply could not be used: %s\nReply again with only a JSON value that matches this JSON schema, with no other text:\n%s", problem, schema)
}

// isProse says whether a problem is a reply with no JSON in it at all.
func isProse(problem string) bool {
	return strings.HasPrefix(problem, "no JSON object or array in the reply") || problem == "the reply is empty"
}

// requiredFields names an object schema's required fields, and the values an
// enum field allows ("action" (one of read_file, edit, finish)).
func requiredFields(schema json.RawMessage) string {
	var s struct {
		Type       any `json:"type"`
		Required   []string
		Properties map[string]struct {
			Enum []any `json:"enum"`
		}
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return ""
	}
	var parts []string
	for _, f := range s.Required {
		part := strconv.Quote(f)
		if enum := s.Properties[f].Enum; len(enum) > 0 && len(enum) <= 16 {
			vals := make([]string, len(enum))
			for i, v := range enum {
				vals[i] = fmt.Sprint(v)
			}
			part += " (one of " + strings.Join(vals, ", ") + ")"
		}
		parts = append(parts, part)
	}
	if len(parts) == 1 {
		return "the field " + parts[0]
	}
	return "the fields " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// cutText is the re-ask after a reply cut at the length limit.
func cutText(tokens int, schema json.RawMessage) string {
	return fmt.Sprintf("Your reply was cut off at %d tokens, so none of it was used. Make a smaller change (or a shorter answer) that fits in one reply. Reply with only a JSON value that matches this JSON schema, with no other text:\n%s", tokens, schema)
}

// decodeReply extracts, validates and decodes a reply; problem says why it
// is unusable ("" when it is fine).
func decodeReply[T any](content string, cs *compiledSchema) (T, string) {
	var out T
	b, err := ExtractJSON(content)
	if err != nil {
		return out, err.Error()
	}
	inst, err := validator.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return out, "the JSON could not be read: " + err.Error()
	}
	if err := cs.sch.Validate(inst); err != nil {
		return out, validationProblem(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, "the JSON does not fit the expected shape: " + err.Error()
	}
	return out, ""
}

// validationProblem lists the leaf errors of a validation failure, each with
// the place it is at: "at '/done': got string, want boolean".
func validationProblem(err error) string {
	ve, ok := err.(*validator.ValidationError)
	if !ok {
		return err.Error()
	}
	var leaves []string
	var walk func(e *validator.ValidationError)
	walk = func(e *validator.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e.Error()) // a leaf reads "at '/done': got string, want boolean"
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) > 8 {
		leaves = append(leaves[:8], fmt.Sprintf("and %d more", len(leaves)-8))
	}
	return "the JSON does not match the schema: " + strings.Join(leaves, "; ")
}

// Text asks c for a plain-text reply (code, a patch) that must arrive whole.
// A runaway reply is asked again once with varied sampling; a reply cut at
// the length limit is asked again once with "cut off at N tokens; make a
// smaller change". When the second reply is cut too the error is a
// *TruncatedError, when it runs away too a *StructuredError with
// StopRunaway: the caller never gets a cut reply as if it were whole.
// Response.Reasks says why each re-ask was made.
func Text(ctx context.Context, c Chatter, req Request) (Response, error) {
	var (
		spent tally
		next  = req
	)
	for attempt := 1; ; attempt++ {
		resp, err := c.Chat(ctx, next)
		spent.add(resp)
		var e *Error
		if errors.As(err, &e) && e.Kind == KindRunaway {
			problem := "the reply ran on without ending until the server stopped it"
			if attempt > 1 {
				return spent.done(resp), &StructuredError{Problem: problem, Attempts: attempt, Stop: StopRunaway}
			}
			spent.reask(ctx, req, Reask{Stop: StopRunaway, Problem: problem})
			next = req
			next.Variation = req.Variation + 1
			continue
		}
		if err != nil {
			return spent.done(resp), err
		}
		if resp.Stop() != StopLength {
			return spent.done(resp), nil
		}
		tokens := resp.Usage.CompletionTokens
		if tokens == 0 {
			tokens = next.MaxTokens
		}
		if attempt > 1 {
			return spent.done(resp), &TruncatedError{Tokens: tokens, Raw: resp.Content}
		}
		spent.reask(ctx, req, Reask{Stop: StopLength, Tokens: tokens, Problem: fmt.Sprintf("the reply was cut off at %d tokens, the most one reply may have", tokens)})
		next = req
		next.Messages = append(append([]Message(nil), req.Messages...),
			Message{Role: "assistant", Content: textutil.Clip(resp.Content, 300) + " [cut off]"},
			Message{Role: "user", Content: fmt.Sprintf("Your reply was cut off at %d tokens, so none of it was used. Make a smaller change (or a shorter answer) that fits in one reply, in the same form as asked.", tokens)})
	}
}

// tally adds up the calls of one ask, re-asks included, for its Response.
type tally struct {
	usage   Usage
	elapsed time.Duration
	reasks  []Reask
}

func (t *tally) add(r Response) {
	t.usage, t.elapsed = t.usage.Add(r.Usage), t.elapsed+r.Elapsed
}

// reask records a reply that is asked again for, and tells the observer
// now: a long call's cut-off reply is seen when it happens, not when the
// re-ask has ended too.
func (t *tally) reask(ctx context.Context, req Request, r Reask) {
	t.reasks = append(t.reasks, r)
	observe(ctx, Note{Kind: NoteReask, Role: req.Role, Label: req.Label, Tokens: r.Tokens, Stop: r.Stop, Problem: r.Problem})
}

// done is r carrying the totals.
func (t *tally) done(r Response) Response {
	r.Usage, r.Elapsed, r.Reasks = t.usage, t.elapsed, t.reasks
	return r
}
