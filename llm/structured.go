package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
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
// gets one re-ask that quotes the problem; a second failure is a
// *StructuredError. The Response carries the usage of every call made, also
// on error (the tokens were spent). Errors of the call itself (*Error) are
// returned as they are.
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
	resp, err := c.Chat(ctx, req)
	if err != nil {
		return zero, resp, err
	}
	out, problem := decodeReply[T](resp.Content, cs)
	if problem == "" {
		return out, resp, nil
	}
	// One re-ask: show the model its reply and what was wrong with it.
	retry := req
	retry.Messages = append(append([]Message(nil), req.Messages...),
		Message{Role: "assistant", Content: resp.Content},
		Message{Role: "user", Content: reaskText(problem, cs.raw)})
	resp2, err := c.Chat(ctx, retry)
	total := resp.Usage.Add(resp2.Usage)
	var e *Error
	if errors.As(err, &e) && e.Kind == KindContextTooLarge {
		// The unusable reply quoted back does not fit the model's window:
		// no re-ask, and the reply stays the model's failure, not a fault.
		resp.Usage = total
		return zero, resp, &StructuredError{Raw: resp.Content, Problem: problem + " (no re-ask: quoting the reply back would not fit the context window)", Attempts: 1}
	}
	if err != nil {
		resp2.Usage = total
		return zero, resp2, err
	}
	resp2.Usage = total
	resp2.Elapsed += resp.Elapsed
	out, problem = decodeReply[T](resp2.Content, cs)
	if problem == "" {
		return out, resp2, nil
	}
	return zero, resp2, &StructuredError{Raw: resp2.Content, Problem: problem, Attempts: 2}
}

func reaskText(problem string, schema json.RawMessage) string {
	return fmt.Sprintf("Your reply could not be used: %s\nReply again with only a JSON value that matches this JSON schema, with no other text:\n%s", problem, schema)
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
