package knowledge

import (
	"slices"
	"strings"
)

// Status is a document's lifecycle state.
type Status string

// Lifecycle states of a document.
const (
	// Established docs are confirmed guidance: user-written docs, and supervisor
	// docs used without trouble for enough tasks.
	Established Status = "established"
	// Provisional docs are a supervisor's best guess awaiting confirmation.
	Provisional Status = "provisional"
	// Deprecated docs no longer apply and are never injected into prompts.
	Deprecated Status = "deprecated"
)

// Valid reports whether s is one of the three known states.
func (s Status) Valid() bool {
	switch s {
	case Established, Provisional, Deprecated:
		return true
	}
	return false
}

// Categories of documents: the first directory under the knowledge dir.
const (
	CatConventions = "conventions"
	CatDesign      = "design"
	CatLessons     = "lessons"
	CatDomain      = "domain"
)

// Categories returns the known category directories in prompt order.
func Categories() []string { return []string{CatConventions, CatDesign, CatLessons, CatDomain} }

func knownCategory(c string) bool { return slices.Contains(Categories(), c) }

// Change is one changelog entry: who changed a document, after which task,
// during which milestone, and what changed.
type Change struct {
	Date      string // YYYY-MM-DD
	Writer    Writer
	Task      string
	Milestone string
	Summary   string
}

// Section is one "## " section of a document as written, kept so that content
// lemmings does not know survives a rewrite unchanged.
type Section struct {
	Heading string // text after "## "
	Line    int    // 1-based line of the heading
	Body    string // lines after the heading, as written
}

// Doc is one knowledge document. Edit the exported fields and call Render: parts
// whose value did not change are written back byte for byte as they were read.
type Doc struct {
	// Path is relative to the knowledge dir, with forward slashes
	// ("conventions/errors.md").
	Path     string
	Category string // first path element

	Title      string
	UpdatedBy  string // writer named in "_Last updated by: writer, task_"
	SourceTask string // task named in "_Last updated by: writer, task_"
	Status     Status
	// Themes come from an optional "_Themes: a, b_" line; nil when absent
	// (ThemeWords then derives them from the title, headings and file name).
	Themes []string

	Rules     string // body of "## Rules", trimmed of surrounding blank lines
	Examples  string // body of "## Examples"
	Rationale string // body of "## Rationale"
	Changelog []Change

	raw      []byte     // bytes read; nil for a doc built in code
	orig     fields     // field values as parsed, to detect edits
	lines    []string   // raw split into lines, each without its newline
	eol      string     // line ending used by the doc ("\n" or "\r\n")
	titleAt  int        // line index of the title, -1 if none
	headerTo int        // first line index of the first section (or len(lines))
	meta     []metaLine // metadata lines found in the header
	sections []rawSection
	finalEOL bool // raw ended with a line ending
}

// fields is the editable part of a Doc, compared at Render time.
type fields struct {
	Title, UpdatedBy, SourceTask string
	Status                       Status
	Themes                       []string
	themesSet                    bool
	Rules, Examples, Rationale   string
	Changelog                    []Change
}

func (d *Doc) fields() fields {
	return fields{
		Title: d.Title, UpdatedBy: d.UpdatedBy, SourceTask: d.SourceTask, Status: d.Status,
		Themes: slices.Clone(d.Themes), themesSet: d.Themes != nil,
		Rules: d.Rules, Examples: d.Examples, Rationale: d.Rationale,
		Changelog: slices.Clone(d.Changelog),
	}
}

// Sections returns the document's "## " sections in order, as written.
func (d *Doc) Sections() []Section {
	out := make([]Section, 0, len(d.sections))
	for _, s := range d.sections {
		out = append(out, Section{Heading: s.heading, Line: s.start + 1, Body: strings.Join(d.lines[s.start+1:s.end], "\n")})
	}
	return out
}

// Clone returns a deep copy of d.
func (d *Doc) Clone() *Doc {
	c := *d
	c.Themes = slices.Clone(d.Themes)
	c.Changelog = slices.Clone(d.Changelog)
	c.raw = slices.Clone(d.raw)
	c.orig.Themes = slices.Clone(d.orig.Themes)
	c.orig.Changelog = slices.Clone(d.orig.Changelog)
	c.lines = slices.Clone(d.lines)
	c.meta = slices.Clone(d.meta)
	c.sections = slices.Clone(d.sections)
	return &c
}

// EffectiveStatus is the status used for selection: a missing or invalid
// status counts as provisional (lint reports it).
func (d *Doc) EffectiveStatus() Status {
	s := Status(strings.ToLower(strings.TrimSpace(string(d.Status))))
	if !s.Valid() {
		return Provisional
	}
	return s
}

// Core returns the main guidance of the doc: the Rules body, or when there is
// no Rules section, the body of the first section that is not Examples,
// Rationale or Changelog.
func (d *Doc) Core() string {
	if strings.TrimSpace(d.Rules) != "" {
		return d.Rules
	}
	for _, s := range d.sections {
		if s.kind == secOther {
			return trimBlank(strings.Join(d.lines[s.start+1:s.end], "\n"))
		}
	}
	return ""
}

// ThemeWords returns the normalised words the doc is matched on: the explicit
// themes when given, otherwise words of the title, of headings other than the
// standard ones, and of the file name.
func (d *Doc) ThemeWords() []string {
	var src []string
	if len(d.Themes) > 0 {
		src = d.Themes
	} else {
		src = append(src, d.Title)
		for _, s := range d.sections {
			if s.kind == secOther {
				src = append(src, s.heading)
			}
		}
		for _, l := range d.lines {
			if h, ok := strings.CutPrefix(strings.TrimSpace(l), "### "); ok {
				src = append(src, h)
			}
		}
		base := d.Path[strings.LastIndex(d.Path, "/")+1:]
		src = append(src, strings.TrimSuffix(base, ".md"))
	}
	return themeWords(src...)
}

// LastChange returns the latest changelog date ("" when there is none).
func (d *Doc) LastChange() string {
	last := ""
	for _, c := range d.Changelog {
		if c.Date > last {
			last = c.Date
		}
	}
	return last
}
