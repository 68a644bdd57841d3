package supervisors

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Supervisor replies keep the keys docs/supervisors.md names and add what a single model
// call needs to hand back: the documents' content ("docs") and a list of
// distinct findings for convergence.

// DirectiveSpec is a directive as a supervisor files it.
type DirectiveSpec struct {
	Type        string   `json:"type" jsonschema:"enum=functional,enum=cleanup"`
	Description string   `json:"description" jsonschema:"minLength=1,maxLength=300"`
	Rationale   string   `json:"rationale,omitempty" jsonschema:"maxLength=300"`
	Priority    string   `json:"priority" jsonschema:"enum=critical,enum=normal,enum=low"`
	Files       []string `json:"files,omitempty" jsonschema:"maxItems=20"`
}

// DocSpec is a knowledge document as a supervisor writes it.
type DocSpec struct {
	Path      string   `json:"path" jsonschema:"minLength=1,maxLength=120"`
	Title     string   `json:"title" jsonschema:"minLength=1,maxLength=120"`
	Rules     []string `json:"rules" jsonschema:"minItems=1,maxItems=8,items.maxLength=200"`
	Examples  string   `json:"examples,omitempty" jsonschema:"maxLength=1200"`
	Rationale string   `json:"rationale,omitempty" jsonschema:"maxLength=600"`
	Themes    []string `json:"themes,omitempty" jsonschema:"maxItems=4,items.maxLength=40"`
}

// CodeStyleReply is the Code Style supervisor's answer.
type CodeStyleReply struct {
	ConventionsUpdated []string        `json:"conventions_updated" jsonschema:"maxItems=5"`
	Docs               []DocSpec       `json:"docs" jsonschema:"maxItems=5"`
	Directives         []DirectiveSpec `json:"directives" jsonschema:"maxItems=10"`
	Findings           []string        `json:"findings" jsonschema:"maxItems=20,items.maxLength=160"`
	Summary            string          `json:"summary" jsonschema:"maxLength=600"`
}

// DesignReply is the Design supervisor's answer.
type DesignReply struct {
	DesignUpdates []string        `json:"design_updates" jsonschema:"maxItems=5"`
	Docs          []DocSpec       `json:"docs" jsonschema:"maxItems=5"`
	Directives    []DirectiveSpec `json:"directives" jsonschema:"maxItems=10"`
	Findings      []string        `json:"findings" jsonschema:"maxItems=20,items.maxLength=160"`
	Summary       string          `json:"summary" jsonschema:"maxLength=600"`
}

// KnowledgeItem is one lesson or domain fact the Internaliser captured.
type KnowledgeItem struct {
	Category        string `json:"category" jsonschema:"enum=lesson,enum=domain"`
	Title           string `json:"title" jsonschema:"minLength=1,maxLength=120"`
	Content         string `json:"content" jsonschema:"minLength=1,maxLength=800"`
	SourceTask      string `json:"source_task" jsonschema:"maxLength=40"`
	Confidence      string `json:"confidence" jsonschema:"enum=high,enum=medium,enum=low"`
	NeedsUserReview bool   `json:"needs_user_review"`
}

// InternaliserReply is the Internaliser's answer.
type InternaliserReply struct {
	KnowledgeItems []KnowledgeItem `json:"knowledge_items" jsonschema:"maxItems=8"`
	Summary        string          `json:"summary" jsonschema:"maxLength=600"`
}

// Outcome is what a finished supervisor job hands back: the reply of its
// supervisor's kind, or the error its call ended with.
type Outcome struct {
	Job       runstate.SupervisorJob
	CodeStyle *CodeStyleReply
	Design    *DesignReply
	Intern    *InternaliserReply
	Response  llm.Response
	Err       error
}

// Call asks model for job's supervisor's reply to req (one structured call).
func Call(ctx context.Context, model llm.Chatter, job runstate.SupervisorJob, req llm.Request) Outcome {
	out := Outcome{Job: job}
	switch job.Supervisor {
	case prompts.CodeStyle:
		r, resp, err := llm.Structured[CodeStyleReply](ctx, model, req)
		out.CodeStyle, out.Response, out.Err = &r, resp, err
	case prompts.Design:
		r, resp, err := llm.Structured[DesignReply](ctx, model, req)
		out.Design, out.Response, out.Err = &r, resp, err
	default:
		r, resp, err := llm.Structured[InternaliserReply](ctx, model, req)
		out.Intern, out.Response, out.Err = &r, resp, err
	}
	return out
}

// Unpack turns a supervisor's reply into the documents it writes, the
// directives it files, its findings (for convergence) and its summary.
func Unpack(out Outcome) ([]*knowledge.Doc, []runstate.Directive, []string, string) {
	var docs []*knowledge.Doc
	var dirs []runstate.Directive
	toDirs := func(specs []DirectiveSpec) {
		for _, sp := range specs {
			dirs = append(dirs, runstate.Directive{Type: sp.Type, Description: sp.Description, Rationale: sp.Rationale, Priority: sp.Priority, Files: sp.Files})
		}
	}
	switch {
	case out.CodeStyle != nil:
		r := out.CodeStyle
		for _, sp := range r.Docs {
			docs = append(docs, specDoc("conventions", sp))
		}
		toDirs(r.Directives)
		return docs, dirs, r.Findings, r.Summary
	case out.Design != nil:
		r := out.Design
		for _, sp := range r.Docs {
			docs = append(docs, specDoc("design", sp))
		}
		toDirs(r.Directives)
		return docs, dirs, r.Findings, r.Summary
	case out.Intern != nil:
		r := out.Intern
		var findings []string
		for _, it := range r.KnowledgeItems {
			cat := "lessons"
			if it.Category == "domain" {
				cat = "domain"
			}
			rules := splitRules(it.Content)
			source := strings.TrimSpace(it.SourceTask)
			if source == "" {
				source = "?"
			}
			doc := specDoc(cat, DocSpec{Path: slug(it.Title) + ".md", Title: it.Title, Rules: rules,
				Rationale: fmt.Sprintf("Captured from task %s (confidence: %s).", source, it.Confidence)})
			if it.NeedsUserReview {
				doc.Rationale += " Needs user review: an implicit decision worth confirming."
			}
			docs = append(docs, doc)
			findings = append(findings, strings.ToLower(it.Title))
		}
		return docs, nil, findings, r.Summary
	}
	return nil, nil, nil, ""
}

func splitRules(content string) []string {
	var rules []string
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*0123456789.) "))
		if line != "" {
			rules = append(rules, line)
		}
	}
	if len(rules) == 0 {
		rules = []string{strings.TrimSpace(content)}
	}
	return rules
}

// specDoc places a supervisor's document in the category it declares; the
// store refuses it if that is not the supervisor's own directory.
func specDoc(category string, sp DocSpec) *knowledge.Doc {
	p := path.Clean(strings.TrimPrefix(strings.TrimSpace(sp.Path), "docs/knowledge/"))
	if !strings.Contains(p, "/") {
		p = category + "/" + p
	}
	if !strings.HasSuffix(p, ".md") {
		p += ".md"
	}
	var rules strings.Builder
	for i, r := range sp.Rules {
		fmt.Fprintf(&rules, "%d. %s\n", i+1, strings.TrimSpace(r))
	}
	cat, _, _ := strings.Cut(p, "/")
	return &knowledge.Doc{Path: p, Category: cat, Title: sp.Title, Rules: strings.TrimSpace(rules.String()),
		Examples: sp.Examples, Rationale: sp.Rationale, Themes: sp.Themes}
}

func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if b.Len() >= 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "note"
	}
	return out
}
