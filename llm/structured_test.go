package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

type plan struct {
	Decision  string   `json:"decision" jsonschema:"enum=implement,enum=skip,enum=abort"`
	Title     string   `json:"title" jsonschema:"maxLength=200"`
	Files     []string `json:"files"`
	Done      bool     `json:"done"`
	Reasoning string   `json:"reasoning,omitempty"`
}

// scripted is an in-process Chatter answering from a list.
type scripted struct {
	mu      sync.Mutex
	replies []string
	reqs    []Request
}

func (s *scripted) Chat(_ context.Context, req Request) (Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if len(s.replies) == 0 {
		return Response{}, errors.New("scripted: no reply left")
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return Response{Content: r, Usage: Usage{Calls: 1, PromptTokens: 10, CompletionTokens: 5}}, nil
}

func TestSchemaForIsInlinedAndRequiresFields(t *testing.T) {
	t.Parallel()
	raw, err := SchemaFor[plan]()
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, bad := range []string{"$ref", "$defs", "$schema", "$id"} {
		if strings.Contains(s, bad) {
			t.Errorf("schema has %s: %s", bad, s)
		}
	}
	var doc struct {
		Required             []string `json:"required"`
		AdditionalProperties bool     `json:"additionalProperties"`
	}
	_ = json.Unmarshal(raw, &doc)
	if strings.Join(doc.Required, ",") != "decision,title,files,done" {
		t.Errorf("required %v", doc.Required)
	}
	if !strings.Contains(s, `"enum":["implement","skip","abort"]`) {
		t.Errorf("enum missing: %s", s)
	}
}

func TestStructuredDecodesARepairedReply(t *testing.T) {
	t.Parallel()
	c := &scripted{replies: []string{"Here is my plan:\n```json\n{decision: 'implement', title: 'Add --json', files: ['cmd/list.go',], done: False}\n```"}}
	got, resp, err := Structured[plan](context.Background(), c, Request{Role: "primary", Messages: userMsg("plan")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Decision != "implement" || got.Title != "Add --json" || len(got.Files) != 1 || got.Done {
		t.Errorf("got %+v", got)
	}
	if resp.Usage.Calls != 1 || len(c.reqs) != 1 {
		t.Errorf("one call expected, got %d", len(c.reqs))
	}
	want, _ := SchemaFor[plan]()
	if string(c.reqs[0].Schema) != string(want) {
		t.Errorf("schema not sent with the request")
	}
}

func TestStructuredReasksOnceQuotingTheProblem(t *testing.T) {
	t.Parallel()
	c := &scripted{replies: []string{
		`{"decision": "maybe", "title": "x", "files": [], "done": "yes"}`,
		`{"decision": "skip", "title": "x", "files": [], "done": true}`,
	}}
	got, resp, err := Structured[plan](context.Background(), c, Request{Role: "primary", Messages: userMsg("plan")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Decision != "skip" || !got.Done {
		t.Errorf("got %+v", got)
	}
	if resp.Usage.Calls != 2 || resp.Usage.PromptTokens != 20 {
		t.Errorf("usage must sum both calls: %+v", resp.Usage)
	}
	re := c.reqs[1].Messages
	if len(re) != 3 || re[1].Role != "assistant" || !strings.Contains(re[1].Content, `"maybe"`) {
		t.Fatalf("re-ask must show the model its reply: %+v", re)
	}
	for _, want := range []string{"at '/done'", "boolean", "at '/decision'"} {
		if !strings.Contains(re[2].Content, want) {
			t.Errorf("re-ask lacks %q: %s", want, re[2].Content)
		}
	}
}

func TestStructuredGivesUpWithATypedError(t *testing.T) {
	t.Parallel()
	c := &scripted{replies: []string{"I think we should implement it.", `{"title": "still wrong"}`}}
	_, resp, err := Structured[plan](context.Background(), c, Request{Role: "primary", Messages: userMsg("plan")})
	var se *StructuredError
	if !errors.As(fmt.Errorf("node: %w", err), &se) {
		t.Fatalf("want *StructuredError, got %v", err)
	}
	if se.Attempts != 2 || se.Raw != `{"title": "still wrong"}` || !strings.Contains(se.Problem, "missing propert") {
		t.Errorf("error %+v", se)
	}
	if resp.Usage.Calls != 2 {
		t.Errorf("the spent tokens must be reported: %+v", resp.Usage)
	}
	// Prose where JSON was asked is re-asked narrowly: the fields to send,
	// not the schema the model already had and did not follow.
	reask := c.reqs[1].Messages[2].Content
	if !strings.Contains(reask, "Your reply was text, not the JSON object asked for") || !strings.Contains(reask, `"title"`) || strings.Contains(reask, `"$schema"`) || strings.Contains(reask, `"properties"`) {
		t.Errorf("the re-ask of prose is not narrow: %s", reask)
	}
}

func TestTheNarrowReaskNamesTheChoicesOfAnEnum(t *testing.T) {
	t.Parallel()
	got := requiredFields(json.RawMessage(`{"type":"object","required":["thought","action"],"properties":{"thought":{"type":"string"},"action":{"enum":["read_file","edit","finish"]}}}`))
	if got != `the fields "thought" and "action" (one of read_file, edit, finish)` {
		t.Errorf("got %s", got)
	}
}

func TestStructuredPassesCallErrorsThrough(t *testing.T) {
	t.Parallel()
	c := &scripted{}
	_, _, err := Structured[plan](context.Background(), c, Request{})
	var se *StructuredError
	if err == nil || errors.As(err, &se) {
		t.Fatalf("a failed call is not a StructuredError: %v", err)
	}
}

func TestStructuredWithCallerSchema(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":5}},"required":["n"]}`)
	c := &scripted{replies: []string{`{"n": 9}`, `{"n": 3}`}}
	got, _, err := Structured[map[string]int](context.Background(), c, Request{Schema: schema})
	if err != nil || got["n"] != 3 {
		t.Fatalf("got %v err %v", got, err)
	}
	if !strings.Contains(c.reqs[1].Messages[len(c.reqs[1].Messages)-1].Content, "maximum") {
		t.Errorf("problem should mention the maximum: %+v", c.reqs[1].Messages)
	}
}

func TestStructuredThroughOllama(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: `{"decision":"abort","title":"t","files":["a"],"done":false,}`}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	got, _, err := Structured[plan](context.Background(), r, Request{Role: "primary", Messages: userMsg("plan")})
	if err != nil || got.Decision != "abort" {
		t.Fatalf("got %+v err %v", got, err)
	}
	want, _ := SchemaFor[plan]()
	if f := srv.ChatCalls()[0].Format; string(f) != string(want) {
		t.Errorf("format sent %s", f)
	}
}

// reply2KB is a 2 KB structured reply, as a planner would send.
func reply2KB() string {
	p := plan{Decision: "implement", Title: "Add a --json flag to the list command", Done: false,
		Reasoning: strings.Repeat("The list command prints a table; scripts need JSON. ", 28)}
	for i := 0; i < 12; i++ {
		p.Files = append(p.Files, fmt.Sprintf("internal/cmd/list/file_%02d.go", i))
	}
	b, _ := json.Marshal(p)
	return string(b)
}

type fixedChatter struct{ content string }

func (f fixedChatter) Chat(context.Context, Request) (Response, error) {
	return Response{Content: f.content}, nil
}

// BenchmarkStructuredOverhead measures what Structured adds to a model call
// (schema lookup, extraction, validation, decoding) on a 2 KB reply.
func BenchmarkStructuredOverhead(b *testing.B) {
	for _, bc := range []struct {
		name  string
		reply string
	}{
		{"clean_2KB", reply2KB()},
		{"fenced_in_prose_2KB", "Sure, here it is:\n```json\n" + reply2KB() + "\n```\nLet me know."},
		{"python_literal_trailing_comma_2KB", strings.Replace(strings.TrimSuffix(reply2KB(), "}")+",}", `"done":false`, `"done":False`, 1)},
		{"single_quotes_full_repair_2KB", strings.ReplaceAll(reply2KB(), `"`, `'`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := fixedChatter{bc.reply}
			ctx := context.Background()
			if _, _, err := Structured[plan](ctx, c, Request{}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bc.reply)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := Structured[plan](ctx, c, Request{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/call")
		})
	}
}
