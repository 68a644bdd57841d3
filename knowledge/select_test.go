package knowledge

import (
	"slices"
	"strings"
	"testing"
)

func selectionStore(t *testing.T) *Store {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"conventions/errors.md": "# Errors\n_Status: established_\n## Rules\n1. Wrap errors with context.\n2. Never panic in library code.\n## Examples\nGood: fmt.Errorf(\"x: %w\", err)\n## Rationale\nDiagnosable logs.\n## Changelog\n- 2026-10-01 user: created\n",
		"conventions/naming.md": "# Naming\n_Status: provisional_\n## Rules\n- Short package names.\n",
		"conventions/old.md":    "# Old Style\n_Status: deprecated_\n## Rules\n- Use tabs for alignment.\n",
		"design/storage.md":     "# Storage\n_Status: established_\n_Themes: database, persistence_\n## Rules\n1. Only store/ opens the database.\n",
		"design/ui.md":          "# Terminal UI\n_Status: established_\n## Rules\n1. Plain lines when not a terminal.\n",
		"lessons/sqlite.md":     "# SQLite Busy\n_Status: provisional_\n## Rules\n- Set busy_timeout.\n## Changelog\n- 2026-11-01 internaliser after task_4 (milestone M2): created\n",
		"lessons/older.md":      "# Older Lesson\n_Status: established_\n## Rules\n- Something from M1.\n## Changelog\n- 2026-10-01 internaliser after task_1 (milestone M1): created\n",
		"domain/billing.md":     "# Billing\n_Status: established_\n_Themes: invoices_\n## Rules\n1. Integer cents.\n",
	})
	return openStore(t, dir)
}

func omittedReason(sel Selection, path string) string {
	for _, o := range sel.Omitted {
		if o.Path == path {
			return o.Reason
		}
	}
	return ""
}

func TestSelectFollowsTheRules(t *testing.T) {
	s := selectionStore(t)
	sel := s.Select(SelectRequest{Themes: []string{"persist user settings in the database"}, Milestone: "M2"})
	want := []string{"conventions/errors.md", "design/storage.md", "conventions/naming.md", "lessons/sqlite.md"}
	if !slices.Equal(sel.Included, want) {
		t.Fatalf("included = %q, want %q", sel.Included, want)
	}
	if !slices.Equal(sel.Provisional, []string{"conventions/naming.md", "lessons/sqlite.md"}) {
		t.Errorf("provisional = %q", sel.Provisional)
	}
	for path, reason := range map[string]string{
		"conventions/old.md": "deprecated",
		"design/ui.md":       "do not match the milestone",
		"lessons/older.md":   "not recorded during the current milestone",
		"domain/billing.md":  "do not match the milestone",
	} {
		if got := omittedReason(sel, path); !strings.Contains(got, reason) {
			t.Errorf("%s omitted for %q, want %q", path, got, reason)
		}
	}
	if strings.Contains(sel.Text, "tabs for alignment") {
		t.Error("deprecated doc injected")
	}
	if !strings.HasPrefix(sel.Text, "### Errors\n(conventions/errors.md, established)\n1. Wrap errors with context.\n2. Never panic in library code.\nExamples:\n") {
		t.Errorf("text starts:\n%s", sel.Text)
	}
	if !strings.Contains(sel.Text, "(lessons/sqlite.md, provisional: ") {
		t.Errorf("provisional doc not marked:\n%s", sel.Text)
	}
	if sel.Tokens != EstimateTokens(sel.Text) || sel.Tokens > DefaultBudget {
		t.Errorf("tokens = %d", sel.Tokens)
	}
}

func TestSelectNeverCutsARule(t *testing.T) {
	s := selectionStore(t)
	words := func(s string) int { return len(strings.Fields(s)) }
	full := s.Select(SelectRequest{Budget: 10000, Count: words, Themes: []string{"database"}, Milestone: "M2"})
	for budget := 1; budget <= words(full.Text); budget++ {
		sel := s.Select(SelectRequest{Budget: budget, Count: words, Themes: []string{"database"}, Milestone: "M2"})
		if words(sel.Text) > budget {
			t.Fatalf("budget %d: text has %d words", budget, words(sel.Text))
		}
		// Every rule line in the text is a whole rule from a doc.
		for _, line := range strings.Split(sel.Text, "\n") {
			if reListItem.MatchString(line) && !strings.Contains(full.Text, line+"\n") && !strings.HasSuffix(full.Text, line) {
				t.Fatalf("budget %d: partial rule %q", budget, line)
			}
		}
		// Whatever is not in, is reported.
		for _, p := range full.Included {
			if !slices.Contains(sel.Included, p) && omittedReason(sel, p) == "" {
				t.Fatalf("budget %d: %s neither included nor reported", budget, p)
			}
		}
	}
	// With room for one rule only, the first convention's first rule wins and the rest is reported.
	one := s.Select(SelectRequest{Budget: 12, Count: words, Themes: []string{"database"}, Milestone: "M2"})
	if !slices.Equal(one.Included, []string{"conventions/errors.md"}) || strings.Contains(one.Text, "Never panic") {
		t.Fatalf("tight budget: %q\n%s", one.Included, one.Text)
	}
	if r := omittedReason(one, "conventions/errors.md"); r != "rule 2 of 2, examples left out: over the token budget" {
		t.Errorf("partial omission reason = %q", r)
	}
	if r := omittedReason(one, "design/storage.md"); r != "over the token budget" {
		t.Errorf("dropped doc reason = %q", r)
	}
}

func TestSelectRulesBeforeExamples(t *testing.T) {
	s := selectionStore(t)
	// Enough room for every rule but not for examples: the lower-priority
	// docs' rules beat the first doc's examples.
	words := func(s string) int { return len(strings.Fields(s)) }
	rulesOnly := 0
	full := s.Select(SelectRequest{Budget: 10000, Count: words, Themes: []string{"database"}, Milestone: "M2"})
	for b := 1; b < 10000; b++ {
		sel := s.Select(SelectRequest{Budget: b, Count: words, Themes: []string{"database"}, Milestone: "M2"})
		if len(sel.Included) == len(full.Included) {
			rulesOnly = b
			if strings.Contains(sel.Text, "Examples:") {
				t.Fatalf("examples went in before all rules: %s", sel.Text)
			}
			break
		}
	}
	if rulesOnly == 0 {
		t.Fatal("never fitted all rules")
	}
}

func TestEstimateTokensIsConservative(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"abc", 1}, {"abcd", 2}, {"héllo", 3}, {"日本語", 3}} {
		if got := EstimateTokens(c.in); got != c.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	// English prose: real BPE tokenizers give about one token per 4 characters.
	prose := strings.Repeat("Wrap every returned error with what was being done. ", 20)
	if EstimateTokens(prose) < len(prose)/4 {
		t.Error("estimate below the usual real count")
	}
}

func TestSelectOnEmptyStore(t *testing.T) {
	s := openStore(t, t.TempDir())
	sel := s.Select(SelectRequest{})
	if sel.Text != "" || len(sel.Included) != 0 || len(sel.Omitted) != 0 {
		t.Errorf("empty store selection = %+v", sel)
	}
}
