package knowledge

import (
	"bytes"
	"slices"
	"strings"
)

// Render returns the document as Markdown. When no field changed since Parse
// it returns exactly the bytes read; otherwise only the lines of changed parts
// are rewritten, and everything else (unknown sections, hand formatting,
// comments) is kept as written.
func (d *Doc) Render() []byte {
	cur := d.fields()
	base := d
	if d.raw == nil {
		// Built in code: render onto an empty document.
		base, _ = Parse(d.Path, nil)
	} else if fieldsEqual(cur, d.orig) {
		return bytes.Clone(d.raw)
	}
	r := renderer{d: base, crlf: base.eol == "\r\n"}
	return r.render(cur)
}

type renderer struct {
	d    *Doc
	crlf bool
	out  []string
}

// gen marks a line lemmings wrote with the doc's line ending.
func (r *renderer) gen(s string) {
	if r.crlf {
		s += "\r"
	}
	r.out = append(r.out, s)
}

func (r *renderer) copyLines(lines []string) { r.out = append(r.out, lines...) }

// blank ensures the output so far ends with a blank line (or is empty).
func (r *renderer) blank() {
	if n := len(r.out); n > 0 && strings.TrimSpace(r.out[n-1]) != "" {
		r.gen("")
	}
}

func (r *renderer) render(cur fields) []byte {
	d, o := r.d, r.d.orig
	headerFrom := d.headerFromIndex()

	// Preamble and title.
	switch {
	case d.titleAt >= 0:
		r.copyLines(d.lines[:d.titleAt])
		if cur.Title != o.Title {
			r.gen("# " + oneLine(cur.Title))
		} else {
			r.out = append(r.out, d.lines[d.titleAt])
		}
	default:
		r.copyLines(d.lines[:headerFrom])
		if cur.Title != "" {
			r.gen("# " + oneLine(cur.Title))
			r.gen("")
		}
	}

	r.renderHeader(cur, headerFrom)
	r.renderSections(cur)

	for len(r.out) > 0 && strings.TrimSpace(r.out[len(r.out)-1]) == "" {
		r.out = r.out[:len(r.out)-1]
	}
	eol := "\n"
	if r.crlf {
		eol = "\r\n"
	}
	lines := make([]string, len(r.out))
	for i, l := range r.out {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	if len(lines) == 0 {
		return nil
	}
	return []byte(strings.Join(lines, eol) + eol)
}

// metaValues are the metadata lines lemmings owns, in canonical order.
func metaValues(f fields) []metaLine {
	var out []metaLine
	if f.UpdatedBy != "" || f.SourceTask != "" {
		v := oneLine(f.UpdatedBy)
		if f.SourceTask != "" {
			v += ", " + oneLine(f.SourceTask)
		}
		out = append(out, metaLine{key: "last updated by", value: v})
	}
	if f.Status != "" {
		out = append(out, metaLine{key: "status", value: oneLine(string(f.Status))})
	}
	if f.themesSet {
		t := make([]string, 0, len(f.Themes))
		for _, s := range f.Themes {
			if s = strings.TrimSpace(strings.ReplaceAll(oneLine(s), ",", " ")); s != "" {
				t = append(t, s)
			}
		}
		out = append(out, metaLine{key: "themes", value: strings.Join(t, ", ")})
	}
	return out
}

var metaLabel = map[string]string{"last updated by": "Last updated by", "status": "Status", "themes": "Themes"}

func metaText(m metaLine) string { return "_" + metaLabel[m.key] + ": " + m.value + "_" }

func (r *renderer) renderHeader(cur fields, headerFrom int) {
	d := r.d
	want := metaValues(cur)
	had := metaValues(d.orig)
	changed := map[string]bool{}
	newVal := map[string]metaLine{}
	for _, m := range want {
		newVal[m.key] = m
	}
	for _, m := range had {
		if nv, ok := newVal[m.key]; !ok || nv.value != m.value {
			changed[m.key] = true
		}
	}
	var missing []metaLine
	for _, m := range want {
		if d.metaIndex(m.key) < 0 {
			missing = append(missing, m)
		} else if old := findMeta(had, m.key); old == nil || old.value != m.value {
			changed[m.key] = true
		}
	}
	lastMeta := -1
	for _, m := range d.meta {
		lastMeta = max(lastMeta, m.idx)
	}
	byIdx := map[int]string{}
	for _, m := range d.meta {
		byIdx[m.idx] = m.key
	}
	insertMissing := func() {
		for _, m := range missing {
			r.gen(metaText(m))
		}
		missing = nil
	}
	if lastMeta < 0 && len(missing) > 0 {
		// No metadata yet: put it right under the title, before any text.
		if d.titleAt >= 0 {
			r.gen("")
		}
		insertMissing()
		if headerFrom < d.headerTo && strings.TrimSpace(d.lines[headerFrom]) != "" {
			r.gen("")
		}
	}
	for i := headerFrom; i < d.headerTo; i++ {
		if key, ok := byIdx[i]; ok && changed[key] {
			if nv, ok := newVal[key]; ok {
				r.gen(metaText(nv))
			}
		} else {
			r.out = append(r.out, d.lines[i])
		}
		if i == lastMeta {
			insertMissing()
		}
	}
	insertMissing()
}

func findMeta(ms []metaLine, key string) *metaLine {
	for i := range ms {
		if ms[i].key == key {
			return &ms[i]
		}
	}
	return nil
}

var canonical = []struct {
	kind    secKind
	heading string
}{{secRules, "Rules"}, {secExamples, "Examples"}, {secRationale, "Rationale"}, {secChangelog, "Changelog"}}

func (r *renderer) renderSections(cur fields) {
	d, o := r.d, r.d.orig
	body := map[secKind]string{secRules: cur.Rules, secExamples: cur.Examples, secRationale: cur.Rationale}
	oldBody := map[secKind]string{secRules: o.Rules, secExamples: o.Examples, secRationale: o.Rationale}
	has := map[secKind]bool{}
	for _, s := range d.sections {
		has[s.kind] = true
	}
	// Sections to add, in canonical order.
	var pending []secKind
	for _, c := range canonical {
		if has[c.kind] {
			continue
		}
		if c.kind == secChangelog && len(cur.Changelog) > 0 || c.kind != secChangelog && strings.TrimSpace(body[c.kind]) != "" {
			pending = append(pending, c.kind)
		}
	}
	flush := func(before secKind) {
		for len(pending) > 0 && (before == secOther || pending[0] < before) {
			r.newSection(pending[0], cur)
			pending = pending[1:]
		}
	}
	for _, s := range d.sections {
		if s.kind != secOther {
			flush(s.kind)
		}
		if s.unclosedFence {
			// Anything after an unclosed fence would be swallowed by it.
			flush(secOther)
		}
		lines := d.lines[s.start:s.end]
		switch {
		case s.kind == secChangelog && !slices.Equal(cur.Changelog, o.Changelog):
			r.changelog(s, cur.Changelog)
		case s.kind != secOther && s.kind != secChangelog && body[s.kind] != oldBody[s.kind]:
			if strings.TrimSpace(body[s.kind]) == "" {
				continue // emptied: drop the section
			}
			r.blank()
			r.out = append(r.out, lines[0])
			r.gen("")
			r.bodyLines(body[s.kind])
			r.gen("")
		default:
			r.copyLines(lines)
		}
	}
	flush(secOther)
}

func (r *renderer) bodyLines(s string) {
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		r.gen(l)
	}
}

func (r *renderer) newSection(k secKind, cur fields) {
	r.blank()
	for _, c := range canonical {
		if c.kind == k {
			r.gen("## " + c.heading)
		}
	}
	r.gen("")
	switch k {
	case secRules:
		r.bodyLines(cur.Rules)
	case secExamples:
		r.bodyLines(cur.Examples)
	case secRationale:
		r.bodyLines(cur.Rationale)
	case secChangelog:
		for _, c := range cur.Changelog {
			r.gen(changeLine(c))
		}
	}
	r.gen("")
}

// changelog appends new entries after the ones written by hand when the old
// entries are unchanged; otherwise it rewrites the list.
func (r *renderer) changelog(s rawSection, entries []Change) {
	d, o := r.d, r.d.orig
	lines := d.lines[s.start:s.end]
	if len(entries) >= len(o.Changelog) && slices.Equal(entries[:len(o.Changelog)], o.Changelog) && !s.unclosedFence {
		last := 0
		for i, l := range lines {
			if strings.TrimSpace(l) != "" {
				last = i
			}
		}
		r.copyLines(lines[:last+1])
		if last == 0 {
			r.gen("")
		}
		for _, c := range entries[len(o.Changelog):] {
			r.gen(changeLine(c))
		}
		r.copyLines(lines[last+1:])
		return
	}
	r.blank()
	r.out = append(r.out, lines[0])
	r.gen("")
	for _, c := range entries {
		r.gen(changeLine(c))
	}
	r.gen("")
}

func changeLine(c Change) string {
	var b strings.Builder
	b.WriteString("- ")
	b.WriteString(oneLine(c.Date))
	if c.Writer != "" {
		b.WriteString(" " + strings.Join(strings.Fields(string(c.Writer)), "_"))
	}
	if c.Task != "" {
		b.WriteString(" after " + strings.Join(strings.Fields(c.Task), "_"))
	}
	if c.Milestone != "" {
		m := strings.NewReplacer("(", "[", ")", "]").Replace(oneLine(c.Milestone))
		b.WriteString(" (milestone " + m + ")")
	}
	b.WriteString(": " + oneLine(c.Summary))
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func fieldsEqual(a, b fields) bool {
	return a.Title == b.Title && a.UpdatedBy == b.UpdatedBy && a.SourceTask == b.SourceTask &&
		a.Status == b.Status && a.themesSet == b.themesSet && slices.Equal(a.Themes, b.Themes) &&
		a.Rules == b.Rules && a.Examples == b.Examples && a.Rationale == b.Rationale &&
		slices.Equal(a.Changelog, b.Changelog)
}
