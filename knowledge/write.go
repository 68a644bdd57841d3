package knowledge

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Write stores doc at doc.Path on behalf of writer, after task during
// milestone. It refuses a path outside the writer's directories with an
// *OwnershipError and a document that breaks the format with an
// *InvalidDocError.
//
// A doc built in code (not obtained from Get or Parse) for an existing path
// updates that document: its non-empty fields replace the old ones and
// everything else (unknown sections, changelog) is kept. Supervisors' new or
// rewritten docs are provisional; they may deprecate but never establish.
// User docs default to established. A changelog entry is appended (or, when
// the caller appended one itself, its missing fields are filled in). A write
// that changes nothing is a no-op.
func (s *Store) Write(writer Writer, doc *Doc, task, milestone string) error {
	if doc == nil {
		return fmt.Errorf("knowledge: write: nil document")
	}
	rel, cat, err := checkPath(doc.Path)
	if err != nil {
		return err
	}
	if !writer.Owns(cat) {
		return &OwnershipError{Writer: writer, Path: rel, Category: cat}
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	prev := s.docs[rel]
	// base is the changelog already on disk (or carried by a parsed doc);
	// entries beyond it are the caller's own and get their blanks filled.
	var base []Change
	switch {
	case prev != nil:
		base = prev.Changelog
	case doc.raw != nil:
		base = doc.orig.Changelog
	}
	var added []Change
	if doc.raw == nil {
		added = slices.Clone(doc.Changelog)
	} else if len(doc.Changelog) > len(base) && slices.Equal(doc.Changelog[:len(base)], base) {
		added = slices.Clone(doc.Changelog[len(base):])
	}
	var nd *Doc
	if doc.raw == nil && prev != nil {
		nd = prev.Clone()
		mergeFields(nd, doc)
	} else {
		nd = doc.Clone()
	}
	nd.Path, nd.Category = rel, cat
	nd.Status = Status(strings.ToLower(strings.TrimSpace(string(nd.Status))))
	nd.Changelog = slices.Clone(base)

	nd.Status = nextStatus(writer, prev, nd)
	summary := describeChange(prev, nd)
	if summary == "" && len(added) == 0 {
		return nil
	}
	nd.UpdatedBy, nd.SourceTask = string(writer), task
	if len(added) == 0 {
		added = []Change{{Summary: summary}}
	}
	for _, c := range added {
		if c.Date == "" {
			c.Date = s.now().UTC().Format("2006-01-02")
		}
		if c.Writer == "" {
			c.Writer = writer
		}
		if c.Task == "" {
			c.Task = task
		}
		if c.Milestone == "" {
			c.Milestone = milestone
		}
		if c.Summary == "" {
			c.Summary = summary
		}
		nd.Changelog = append(nd.Changelog, c)
	}
	if err := validate(nd); err != nil {
		return err
	}
	return s.store(nd)
}

// mergeFields copies the fields set on src into dst.
func mergeFields(dst, src *Doc) {
	if src.Title != "" {
		dst.Title = src.Title
	}
	if src.Status != "" {
		dst.Status = src.Status
	}
	if src.Themes != nil {
		dst.Themes = slices.Clone(src.Themes)
	}
	if src.Rules != "" {
		dst.Rules = src.Rules
	}
	if src.Examples != "" {
		dst.Examples = src.Examples
	}
	if src.Rationale != "" {
		dst.Rationale = src.Rationale
	}
}

// nextStatus applies the lifecycle: supervisors cannot establish, and a
// supervisor's change of guidance makes a doc provisional again.
func nextStatus(w Writer, prev, nd *Doc) Status {
	if !w.supervisor() {
		if nd.Status == "" {
			return Established
		}
		return nd.Status
	}
	if nd.Status == Deprecated {
		return Deprecated
	}
	if prev != nil && prev.EffectiveStatus() == Established && !guidanceChanged(prev, nd) {
		return Established
	}
	return Provisional
}

func guidanceChanged(a, b *Doc) bool {
	return trimBlank(a.Rules) != trimBlank(b.Rules) || trimBlank(a.Examples) != trimBlank(b.Examples) || a.Core() != b.Core()
}

// describeChange says what differs between prev and nd, "" if nothing.
func describeChange(prev, nd *Doc) string {
	if prev == nil {
		return "created (" + string(nd.Status) + ")"
	}
	var parts []string
	if oneLine(prev.Title) != oneLine(nd.Title) {
		parts = append(parts, "title")
	}
	if trimBlank(prev.Rules) != trimBlank(nd.Rules) {
		parts = append(parts, "rules")
	}
	if trimBlank(prev.Examples) != trimBlank(nd.Examples) {
		parts = append(parts, "examples")
	}
	if trimBlank(prev.Rationale) != trimBlank(nd.Rationale) {
		parts = append(parts, "rationale")
	}
	if !slices.Equal(prev.Themes, nd.Themes) {
		parts = append(parts, "themes")
	}
	out := ""
	if len(parts) > 0 {
		out = "changed " + strings.Join(parts, ", ")
	}
	if ps := prev.EffectiveStatus(); ps != nd.Status || !Status(strings.ToLower(string(prev.Status))).Valid() {
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("status %s → %s", orNone(string(prev.Status)), nd.Status)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// validate refuses docs that would not read back as written.
func validate(d *Doc) error {
	var probs []string
	if strings.TrimSpace(d.Title) == "" {
		probs = append(probs, "missing title")
	}
	if !d.Status.Valid() {
		probs = append(probs, fmt.Sprintf("invalid status %q", d.Status))
	}
	if n := utf8.RuneCountInString(trimBlank(d.Rules)); n > MaxRulesChars {
		probs = append(probs, fmt.Sprintf("rules section is %d characters (limit %d)", n, MaxRulesChars))
	}
	if strings.TrimSpace(d.Core()) == "" {
		probs = append(probs, "no rules (or other content section)")
	}
	for name, body := range map[string]string{"rules": d.Rules, "examples": d.Examples, "rationale": d.Rationale} {
		if !utf8.ValidString(body) {
			probs = append(probs, name+" is not valid UTF-8")
		}
	}
	if len(probs) == 0 {
		back, _ := Parse(d.Path, d.Render())
		if oneLine(back.Title) != oneLine(d.Title) || back.Rules != trimBlank(d.Rules) ||
			back.Examples != trimBlank(d.Examples) || back.Rationale != trimBlank(d.Rationale) {
			probs = append(probs, "content does not read back as written (a '## ' heading or an unclosed code fence inside a section?)")
		}
	}
	if len(probs) > 0 {
		slices.Sort(probs)
		return &InvalidDocError{Path: d.Path, Problems: probs}
	}
	return nil
}

// store renders, writes and reloads nd, then refreshes the index. s.mu is held.
func (s *Store) store(nd *Doc) error {
	data := nd.Render()
	if err := s.writeFile(nd.Path, data); err != nil {
		return err
	}
	back, _ := Parse(nd.Path, data)
	s.docs[nd.Path] = back
	return s.writeIndexLocked()
}

// SetStatus changes the status of the doc at path on behalf of writer and
// records why in its changelog. Supervisors may set provisional or deprecated
// in their own directories; established is the user's to give
// (ErrStatusNotAllowed).
func (s *Store) SetStatus(p string, status Status, writer Writer, reason string) error {
	rel := cleanRel(p)
	status = Status(strings.ToLower(strings.TrimSpace(string(status))))
	if !status.Valid() {
		return fmt.Errorf("knowledge: set status of %s: invalid status %q", rel, status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[rel]
	if !ok {
		return fmt.Errorf("knowledge: set status of %s: %w", rel, ErrNotFound)
	}
	if !writer.Owns(d.Category) {
		return &OwnershipError{Writer: writer, Path: rel, Category: d.Category}
	}
	if status == Established && writer != User {
		return fmt.Errorf("knowledge: set status of %s: %w", rel, ErrStatusNotAllowed)
	}
	return s.changeStatus(d, status, writer, "", "", reason)
}

// Promote makes a provisional doc established after it was used by uses
// completed tasks without trouble (the threshold is the caller's setting).
// It reports whether the doc changed; other statuses are left alone.
func (s *Store) Promote(p, task, milestone string, uses int) (bool, error) {
	rel := cleanRel(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[rel]
	if !ok {
		return false, fmt.Errorf("knowledge: promote %s: %w", rel, ErrNotFound)
	}
	if d.EffectiveStatus() != Provisional {
		return false, nil
	}
	reason := fmt.Sprintf("used by %d completed tasks without trouble", uses)
	return true, s.changeStatus(d, Established, System, task, milestone, reason)
}

func (s *Store) changeStatus(d *Doc, status Status, w Writer, task, milestone, reason string) error {
	if d.Status == status {
		return nil
	}
	nd := d.Clone()
	summary := fmt.Sprintf("status %s → %s", orNone(string(d.Status)), status)
	if r := oneLine(reason); r != "" {
		summary += ": " + r
	}
	nd.Status = status
	nd.Changelog = append(nd.Changelog, Change{Date: s.now().UTC().Format("2006-01-02"), Writer: w, Task: task, Milestone: milestone, Summary: summary})
	return s.store(nd)
}
