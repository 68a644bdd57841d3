package knowledge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultBudget is the token budget of the PROJECT KNOWLEDGE section, about 2k
// tokens (docs/knowledge.md, "What goes into a prompt").
const DefaultBudget = 2000

// SelectRequest says what the prompt is for.
type SelectRequest struct {
	Budget    int      // tokens; 0 means DefaultBudget
	Themes    []string // current milestone's themes and goal (phrases are fine)
	Milestone string   // current milestone id: lessons recorded during it are included
	// Count counts tokens; nil means EstimateTokens.
	Count func(string) int
}

// Omission is a document (or part of one) left out of a selection, and why.
type Omission struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Selection is the knowledge chosen for one prompt.
type Selection struct {
	Text     string   // body of the "## PROJECT KNOWLEDGE" section; "" when nothing fits
	Included []string // paths of docs whose rules are (at least partly) in Text, in order
	// Provisional lists the included docs that are provisional: the ones
	// whose clean uses count towards promotion (Store.Promote).
	Provisional []string
	Omitted     []Omission // everything left out, with the reason, for the log
	Tokens      int        // Count(Text)
}

// EstimateTokens is a conservative token count for budgets: one token per
// three ASCII characters (rounded up) plus one per non-ASCII character. Common
// BPE tokenizers average about four characters per token on English and code,
// so the estimate over-counts and a budget is not exceeded by the real count.
func EstimateTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		other++
		i += n
	}
	return (ascii+2)/3 + other
}

// candidate is a doc eligible for the prompt, with the parts that may go in.
type candidate struct {
	doc   *Doc
	tier  int
	score int
	items []string // core rules, each whole
	kept  int      // how many items fit
	ex    bool     // examples fit
	rat   bool     // rationale fits
}

// Select chooses the knowledge for a planning prompt within the token budget:
// established conventions always (first), design and domain docs whose themes
// match the milestone, lessons whose changelog records the current milestone;
// provisional docs after all established ones; deprecated docs never. Within
// a group, docs matching more milestone themes come first, then the most
// recently changed. Rules go in before any doc's examples, examples before
// rationale; a rule is never cut: whole rules and docs are left out and
// reported in Omitted.
func (s *Store) Select(req SelectRequest) Selection {
	if req.Budget <= 0 {
		req.Budget = DefaultBudget
	}
	if req.Count == nil {
		req.Count = EstimateTokens
	}
	want := themeWords(req.Themes...)
	var sel Selection
	var cands []*candidate
	for _, d := range s.Docs() {
		c, reason := classify(d, want, req.Milestone)
		if c == nil {
			sel.Omitted = append(sel.Omitted, Omission{Path: d.Path, Reason: reason})
			continue
		}
		cands = append(cands, c)
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(b.score, a.score),
			cmp.Compare(b.doc.LastChange(), a.doc.LastChange()), cmp.Compare(a.doc.Path, b.doc.Path))
	})

	fits := func() bool { return req.Count(assemble(cands)) <= req.Budget }
	// Pass 1: rules, doc by doc, rule by rule, stopping at the first that does not fit.
	for _, c := range cands {
		for c.kept < len(c.items) {
			c.kept++
			if !fits() {
				c.kept--
				break
			}
		}
	}
	// Pass 2: examples, pass 3: rationale, of docs whose rules went in.
	for _, c := range cands {
		if c.kept > 0 && strings.TrimSpace(c.doc.Examples) != "" {
			c.ex = true
			c.ex = fits()
		}
	}
	for _, c := range cands {
		if c.kept > 0 && strings.TrimSpace(c.doc.Rationale) != "" {
			c.rat = true
			c.rat = fits()
		}
	}

	sel.Text = assemble(cands)
	sel.Tokens = req.Count(sel.Text)
	for _, c := range cands {
		if c.kept == 0 {
			sel.Omitted = append(sel.Omitted, Omission{Path: c.doc.Path, Reason: "over the token budget"})
			continue
		}
		sel.Included = append(sel.Included, c.doc.Path)
		if c.doc.EffectiveStatus() == Provisional {
			sel.Provisional = append(sel.Provisional, c.doc.Path)
		}
		var left []string
		switch n := len(c.items); {
		case c.kept == n-1:
			left = append(left, fmt.Sprintf("rule %d of %d", n, n))
		case c.kept < n:
			left = append(left, fmt.Sprintf("rules %d-%d of %d", c.kept+1, n, n))
		}
		if !c.ex && strings.TrimSpace(c.doc.Examples) != "" {
			left = append(left, "examples")
		}
		if !c.rat && strings.TrimSpace(c.doc.Rationale) != "" {
			left = append(left, "rationale")
		}
		if len(left) > 0 {
			sel.Omitted = append(sel.Omitted, Omission{Path: c.doc.Path, Reason: strings.Join(left, ", ") + " left out: over the token budget"})
		}
	}
	return sel
}

// classify decides whether d may go into the prompt and with which priority.
func classify(d *Doc, want []string, milestone string) (*candidate, string) {
	status := d.EffectiveStatus()
	if status == Deprecated {
		return nil, "deprecated"
	}
	items := splitItems(d.Core())
	if len(items) == 0 {
		return nil, "no rules or content"
	}
	score := overlap(d.ThemeWords(), want)
	tier := 0
	switch d.Category {
	case CatConventions:
		tier = 0
	case CatDesign, CatDomain:
		if score == 0 {
			return nil, fmt.Sprintf("themes (%s) do not match the milestone", strings.Join(d.ThemeWords(), ", "))
		}
		tier = 1
	case CatLessons:
		if !recordedDuring(d, milestone) {
			return nil, "not recorded during the current milestone"
		}
		tier = 2
	default:
		return nil, fmt.Sprintf("unknown category %q", d.Category)
	}
	if status != Established {
		tier += 3
	}
	return &candidate{doc: d, tier: tier, score: score, items: items}, ""
}

func recordedDuring(d *Doc, milestone string) bool {
	m := strings.ToLower(strings.TrimSpace(milestone))
	if m == "" {
		return false
	}
	for _, c := range d.Changelog {
		if strings.ToLower(strings.TrimSpace(c.Milestone)) == m {
			return true
		}
	}
	return false
}

func overlap(a, b []string) int {
	n := 0
	for _, w := range a {
		if slices.Contains(b, w) {
			n++
		}
	}
	return n
}

// assemble renders the chosen parts of the candidates, in order.
func assemble(cands []*candidate) string {
	var parts []string
	for _, c := range cands {
		if c.kept == 0 {
			continue
		}
		d := c.doc
		var b strings.Builder
		title := oneLine(d.Title)
		if title == "" {
			title = d.Path
		}
		fmt.Fprintf(&b, "### %s\n", title)
		note := string(d.EffectiveStatus())
		if d.EffectiveStatus() == Provisional {
			note += ": a supervisor's best guess; established docs win where they disagree"
		}
		fmt.Fprintf(&b, "(%s, %s)\n", d.Path, note)
		b.WriteString(strings.Join(c.items[:c.kept], "\n"))
		if c.ex {
			b.WriteString("\nExamples:\n" + trimBlank(d.Examples))
		}
		if c.rat {
			b.WriteString("\nRationale:\n" + trimBlank(d.Rationale))
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "\n\n")
}

// splitItems splits rules into whole items: a list item with its continuation
// lines, or a paragraph when the text is not a list.
func splitItems(text string) []string {
	text = trimBlank(text)
	if text == "" {
		return nil
	}
	var items []string
	var cur []string
	flush := func() {
		if t := trimBlank(strings.Join(cur, "\n")); t != "" {
			items = append(items, t)
		}
		cur = nil
	}
	inFence := ""
	for _, l := range strings.Split(text, "\n") {
		if inFence != "" {
			if closesFence(l, inFence) {
				inFence = ""
			}
			cur = append(cur, l)
			continue
		}
		if m := reFence.FindStringSubmatch(l); m != nil {
			inFence = m[1]
			cur = append(cur, l)
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent <= 3 && reListItem.MatchString(l) {
			flush()
		} else if strings.TrimSpace(l) == "" && len(cur) > 0 && !reListItem.MatchString(cur[0]) {
			flush() // paragraph break between prose rules
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return items
}
