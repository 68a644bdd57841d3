package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/lemmings-dev/lemmings/internal/textutil"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// InstructionsTemplate is the name of the optional sub-template a role
// template may define ({{define "instructions"}}…{{end}}): rendered with the
// same data, it becomes the last, required context section, "## INSTRUCTIONS".
const InstructionsTemplate = "instructions"

// Section is one titled block of context, rendered as "## TITLE\nbody".
// When the prompt is over budget, sections with the lowest Priority go first;
// Required ones are never dropped or cut.
type Section struct {
	Title    string
	Body     string
	Priority int
	Required bool
}

// Prompt is a composed prompt: a system message and a user message.
type Prompt struct {
	Messages []Message
	// Dropped names the sections left out ("TITLE") or cut short
	// ("TITLE (truncated)") to fit the budget.
	Dropped []string
	Tokens  int // estimated (CountTokens)
}

// Composer builds prompts in a fixed order: the system message is the global
// preamble, the project preamble and the role's template, in that order (empty
// parts left out); then the context sections, in the order given, in one user
// message, so stable sections come first and local prompt caches are reused.
type Composer struct {
	global, project string
	templates       map[string]*template.Template
	origin          map[string]string // role → where its template came from
}

var templateFuncs = template.FuncMap{
	"join": strings.Join,
	"trim": strings.TrimSpace,
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// NewComposer parses every template up front, so a broken one is an error at
// start naming its file. defaults holds the built-in <role>.tmpl files (at its
// root; may be nil); overrideDir (may be "" or missing) holds a project's
// <role>.tmpl overrides, each of which must replace a built-in template when
// there are built-ins. An override that does not define "instructions"
// keeps the built-in's.
func NewComposer(defaults fs.FS, overrideDir, globalPreamble, projectPreamble string) (*Composer, error) {
	c := &Composer{global: globalPreamble, project: projectPreamble,
		templates: map[string]*template.Template{}, origin: map[string]string{}}
	if defaults != nil {
		names, err := fs.Glob(defaults, "*.tmpl")
		if err != nil {
			return nil, fmt.Errorf("llm: list prompt templates: %w", err)
		}
		for _, name := range names {
			text, err := fs.ReadFile(defaults, name)
			if err != nil {
				return nil, fmt.Errorf("llm: read prompt template %s: %w", name, err)
			}
			role := strings.TrimSuffix(path.Base(name), ".tmpl")
			t, err := parseTemplate(role, string(text))
			if err == nil {
				err = checkTemplateBounds(t)
			}
			if err != nil {
				return nil, fmt.Errorf("llm: built-in prompt template %s: %w", name, err)
			}
			c.templates[role], c.origin[role] = t, "built-in "+name
		}
	}
	if overrideDir == "" {
		return c, nil
	}
	entries, err := os.ReadDir(overrideDir)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("llm: prompt overrides: %w", err)
	}
	builtins := len(c.templates) > 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".tmpl") {
			continue
		}
		file := filepath.Join(overrideDir, e.Name())
		role := strings.TrimSuffix(e.Name(), ".tmpl")
		base, known := c.templates[role]
		if builtins && !known {
			return nil, fmt.Errorf("llm: prompt override %s: there is no template %q to override (known: %s)",
				file, role, strings.Join(c.Roles(), ", "))
		}
		text, err := readOverride(file)
		if err != nil {
			return nil, fmt.Errorf("llm: prompt override %s: %w", file, err)
		}
		t, err := parseTemplate(role, string(text))
		if err != nil {
			return nil, fmt.Errorf("llm: prompt override %s: %w", file, err)
		}
		if err := checkTemplateBounds(t); err != nil {
			return nil, fmt.Errorf("llm: prompt override %s: %w", file, err)
		}
		if known && t.Lookup(InstructionsTemplate) == nil {
			if inst := base.Lookup(InstructionsTemplate); inst != nil {
				if _, err := t.AddParseTree(InstructionsTemplate, inst.Tree); err != nil {
					return nil, fmt.Errorf("llm: prompt override %s: %w", file, err)
				}
			}
		}
		c.templates[role], c.origin[role] = t, file
	}
	return c, nil
}

// readOverride reads a repository's template file: a regular file (a link
// could name any file of the machine, whose text would go into prompts) of
// at most MaxTemplateBytes.
func readOverride(file string) ([]byte, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (a link or a device): a prompt template must be a file of the repository")
	}
	if fi.Size() > MaxTemplateBytes {
		return nil, fmt.Errorf("%d bytes, over the %d a prompt template may have", fi.Size(), MaxTemplateBytes)
	}
	return safefile.Limited(file, MaxTemplateBytes)
}

// execute runs t with data within the output and time bounds.
func execute(t *template.Template, data any) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(newBoundedWriter(&b), data); err != nil {
		return "", err
	}
	return b.String(), nil
}

func parseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Funcs(templateFuncs).Parse(text)
}

// Roles lists the template names, sorted.
func (c *Composer) Roles() []string {
	out := make([]string, 0, len(c.templates))
	for r := range c.templates {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Origin says where role's template came from: "built-in <file>" or the
// override's path.
func (c *Composer) Origin(role string) string { return c.origin[role] }

// Render executes one template of role's set with data: name "" (or the role
// itself) is the main text, any other name a block the template defines with
// {{define}}, such as "instructions". A block the template does not define
// renders as "" (not every role has one); an unknown role is an error.
func (c *Composer) Render(role, name string, data any) (string, error) {
	t, ok := c.templates[role]
	if !ok {
		return "", fmt.Errorf("llm: no prompt template %q (known: %s)", role, strings.Join(c.Roles(), ", "))
	}
	if name != "" && name != role {
		if t = t.Lookup(name); t == nil {
			return "", nil
		}
	}
	out, err := execute(t, data)
	if err != nil {
		return "", fmt.Errorf("llm: render prompt %s %q (%s): %w", role, name, c.origin[role], err)
	}
	return out, nil
}

// Compose renders role's template with data and assembles the prompt. With
// budget > 0 (tokens, as CountTokens counts) it packs the sections: whole
// sections with the lowest Priority are dropped first (the later one on a
// tie) while the overflow is at least their size; then the largest of the
// lowest-priority optional sections left is cut at a line boundary, with a
// marker saying how many lines were cut (and dropped if nothing of it fits).
// Required sections are never touched. If the required parts alone exceed
// the budget the error is a KindContextTooLarge *Error.
func (c *Composer) Compose(role string, data any, budget int, sections ...Section) (Prompt, error) {
	t, body, err := c.roleText(role, data)
	if err != nil {
		return Prompt{}, err
	}
	secs, err := c.withInstructions(t, role, data, sections)
	if err != nil {
		return Prompt{}, err
	}
	system := textutil.JoinParagraphs(c.global, c.project, body)
	kept, dropped, err := pack(system, "", secs, budget)
	if err != nil {
		return Prompt{}, err
	}
	msgs := promptMessages(system, renderSections(kept))
	return Prompt{Messages: msgs, Dropped: dropped, Tokens: countMessages(msgs, nil)}, nil
}

// SharedTemplate is the optional template every role's prompt shares when it
// is composed with Shared and ComposeAfter: its text closes the system
// message, after the preambles.
const SharedTemplate = "shared"

// RoleSection is the title under which ComposeAfter puts the role's template,
// after the shared head.
const RoleSection = "ROLE"

// Shared is the start that every role's prompt shares byte for byte: the
// system message and the head of the user message. A local server's prompt
// cache then serves it across role switches (the same model answering the
// planner, then the implementor, then QA). Build it with Composer.Shared and
// give it to ComposeAfter.
type Shared struct {
	System string
	// Head is the shared sections, rendered; "" when there are none.
	Head string
	// Tokens is the estimate of System and Head together.
	Tokens int
	// Dropped names what packing left out or cut, as Prompt.Dropped does.
	Dropped []string
}

// Shared renders the shared start of the prompts: the system message is the
// global preamble, the project preamble and the "shared" template (when there
// is one), and the sections, packed to budget as Compose packs, are the head
// of the user message. It is packed once, so every role gets the same bytes
// whatever its own budget.
func (c *Composer) Shared(budget int, sections ...Section) (Shared, error) {
	var shared string
	if t, ok := c.templates[SharedTemplate]; ok {
		out, err := execute(t, nil)
		if err != nil {
			return Shared{}, fmt.Errorf("llm: render prompt %s (%s): %w", SharedTemplate, c.origin[SharedTemplate], err)
		}
		shared = out
	}
	system := textutil.JoinParagraphs(c.global, c.project, shared)
	var secs []Section
	for _, s := range sections {
		if strings.TrimSpace(s.Body) != "" {
			secs = append(secs, s)
		}
	}
	kept, dropped, err := pack(system, "", secs, budget)
	if err != nil {
		return Shared{}, err
	}
	head := renderSections(kept)
	return Shared{System: system, Head: head, Tokens: countMessages(promptMessages(system, head), nil), Dropped: dropped}, nil
}

// ComposeAfter composes role's prompt after the shared start sh: the system
// message is sh.System, and the user message is sh.Head, then "## ROLE" with
// the role's template, then the sections in the order given and the
// template's instructions, packed to budget (which counts the shared start
// too; the shared start itself is never cut again).
func (c *Composer) ComposeAfter(sh Shared, role string, data any, budget int, sections ...Section) (Prompt, error) {
	t, body, err := c.roleText(role, data)
	if err != nil {
		return Prompt{}, err
	}
	secs := []Section{{Title: RoleSection, Body: strings.TrimSpace(body), Required: true}}
	secs, err = c.withInstructions(t, role, data, append(secs, sections...))
	if err != nil {
		return Prompt{}, err
	}
	kept, dropped, err := pack(sh.System, sh.Head, secs, budget)
	if err != nil {
		return Prompt{}, err
	}
	msgs := promptMessages(sh.System, joinHead(sh.Head, renderSections(kept)))
	return Prompt{Messages: msgs, Dropped: append(slices.Clone(sh.Dropped), dropped...), Tokens: countMessages(msgs, nil)}, nil
}

// roleText is the role's template and its text rendered with data.
func (c *Composer) roleText(role string, data any) (*template.Template, string, error) {
	t, ok := c.templates[role]
	if !ok {
		return nil, "", fmt.Errorf("llm: no prompt template %q (known: %s)", role, strings.Join(c.Roles(), ", "))
	}
	body, err := execute(t, data)
	if err != nil {
		return nil, "", fmt.Errorf("llm: render prompt %s (%s): %w", role, c.origin[role], err)
	}
	return t, body, nil
}

// withInstructions drops empty sections and adds the template's
// instructions block as the last section, unless one was given.
func (c *Composer) withInstructions(t *template.Template, role string, data any, sections []Section) ([]Section, error) {
	var secs []Section
	hasInstructions := false
	for _, s := range sections {
		if strings.EqualFold(strings.TrimSpace(s.Title), "INSTRUCTIONS") {
			hasInstructions = true
		}
		if strings.TrimSpace(s.Body) != "" {
			secs = append(secs, s)
		}
	}
	if inst := t.Lookup(InstructionsTemplate); inst != nil && !hasInstructions {
		ib, err := execute(inst, data)
		if err != nil {
			return nil, fmt.Errorf("llm: render prompt %s instructions (%s): %w", role, c.origin[role], err)
		}
		if strings.TrimSpace(ib) != "" {
			secs = append(secs, Section{Title: "INSTRUCTIONS", Body: ib, Required: true})
		}
	}
	return secs, nil
}

func joinHead(head, rest string) string {
	switch {
	case head == "":
		return rest
	case rest == "":
		return head
	}
	return head + "\n\n" + rest
}

func renderSections(secs []Section) string {
	var b strings.Builder
	for i, s := range secs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## ")
		b.WriteString(strings.TrimSpace(s.Title))
		b.WriteByte('\n')
		b.WriteString(strings.TrimRight(s.Body, "\n"))
	}
	return b.String()
}

func promptMessages(system, user string) []Message {
	var msgs []Message
	if system != "" {
		msgs = append(msgs, Message{Role: "system", Content: system})
	}
	if user != "" {
		msgs = append(msgs, Message{Role: "user", Content: user})
	}
	return msgs
}

// JoinUserTurns makes consecutive user messages one: a small model read a
// second user turn straight after the first as text to continue (SmolLM2
// wrote the prompt's headings back, 512 tokens of them). The earlier
// message's bytes stay first, so the server's prompt cache still serves them.
func JoinUserTurns(msgs []Message) []Message {
	out := msgs[:0:0]
	for _, m := range msgs {
		if n := len(out); n > 0 && m.Role == "user" && out[n-1].Role == "user" {
			out[n-1].Content += "\n\n" + m.Content
			continue
		}
		out = append(out, m)
	}
	return out
}
