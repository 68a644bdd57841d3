package knowledge

import (
	"slices"
	"strings"
	"testing"
)

// seedDoc is the example of docs/knowledge.md ("Document format"), with a changelog and
// a section lemmings does not know.
const seedDoc = `# Error Handling Conventions

_Last updated by: code_style_supervisor, task_12_
_Status: established_

## Rules

1. All tool functions raise ` + "`ToolError`" + ` with descriptive message, never bare ` + "`Exception`" + `
2. Agent nodes catch ` + "`ToolError`" + ` and include in result summary, never swallow silently
3. Graph-level errors propagate to status stream via ` + "`error`" + ` state field

## Examples

Good:
  raise ToolError(f"File not found: {path}")

Bad:
  raise Exception("error")
  return None  # silently swallowing

## Rationale

Consistent error handling ensures QA can diagnose failures from result summaries
without reading implementation code.

## Open questions   

*   Should retries be logged?   (hand formatting kept)

## Changelog

- 2026-10-01 code_style after task_12 (milestone M1): created
- 2026-10-02 user: tightened rule 2
`

func TestParseReadsTheSeedFormat(t *testing.T) {
	d, probs := Parse("conventions/error_handling.md", []byte(seedDoc))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if d.Title != "Error Handling Conventions" || d.Category != CatConventions {
		t.Errorf("title/category = %q/%q", d.Title, d.Category)
	}
	if d.UpdatedBy != "code_style_supervisor" || d.SourceTask != "task_12" || d.Status != Established {
		t.Errorf("meta = %q %q %q", d.UpdatedBy, d.SourceTask, d.Status)
	}
	if !strings.HasPrefix(d.Rules, "1. All tool functions") || !strings.HasSuffix(d.Rules, "state field") {
		t.Errorf("rules = %q", d.Rules)
	}
	if !strings.Contains(d.Examples, `raise Exception("error")`) || !strings.HasPrefix(d.Rationale, "Consistent") {
		t.Errorf("examples/rationale = %q / %q", d.Examples, d.Rationale)
	}
	want := []Change{
		{Date: "2026-10-01", Writer: "code_style", Task: "task_12", Milestone: "M1", Summary: "created"},
		{Date: "2026-10-02", Writer: "user", Summary: "tightened rule 2"},
	}
	if !slices.Equal(d.Changelog, want) {
		t.Errorf("changelog = %+v", d.Changelog)
	}
	secs := d.Sections()
	var heads []string
	for _, s := range secs {
		heads = append(heads, s.Heading)
	}
	if !slices.Equal(heads, []string{"Rules", "Examples", "Rationale", "Open questions", "Changelog"}) {
		t.Errorf("sections = %q", heads)
	}
	if secs[0].Line != 6 {
		t.Errorf("rules heading line = %d, want 6", secs[0].Line)
	}
}

func TestRenderUnchangedIsByteForByte(t *testing.T) {
	for name, src := range map[string]string{
		"seed":                 seedDoc,
		"crlf":                 strings.ReplaceAll(seedDoc, "\n", "\r\n"),
		"no final newline":     strings.TrimSuffix(seedDoc, "\n"),
		"odd spacing":          "  # T  \n\n\n_Status:   established _\n##   Rules ##\n- a\n\n\n\n",
		"front matter kept":    "---\ntitle: x\n---\n# T\n_Status: established_\n",
		"empty":                "",
		"comment before title": "<!-- keep me -->\n# T\n_Status: provisional_\n## Rules\n1. x\n",
	} {
		t.Run(name, func(t *testing.T) {
			d, _ := Parse("conventions/x.md", []byte(src))
			if got := string(d.Render()); got != src {
				t.Errorf("render changed an untouched doc:\n got %q\nwant %q", got, src)
			}
		})
	}
}

func TestRenderRewritesOnlyWhatChanged(t *testing.T) {
	d, _ := Parse("conventions/error_handling.md", []byte(seedDoc))
	d.Status = Provisional
	d.Rationale = "Errors must be diagnosable from summaries."
	d.Changelog = append(d.Changelog, Change{Date: "2026-11-01", Writer: CodeStyle, Task: "task_20", Milestone: "M2", Summary: "rationale shortened"})
	out := string(d.Render())

	for _, keep := range []string{
		"_Last updated by: code_style_supervisor, task_12_\n",
		"## Open questions   \n\n*   Should retries be logged?   (hand formatting kept)\n",
		"- 2026-10-01 code_style after task_12 (milestone M1): created\n- 2026-10-02 user: tightened rule 2\n- 2026-11-01 code_style after task_20 (milestone M2): rationale shortened\n",
		"  raise ToolError(f\"File not found: {path}\")\n",
	} {
		if !strings.Contains(out, keep) {
			t.Errorf("lost %q in:\n%s", keep, out)
		}
	}
	if !strings.Contains(out, "_Status: provisional_") || strings.Contains(out, "established") {
		t.Errorf("status not rewritten:\n%s", out)
	}
	back, probs := Parse(d.Path, []byte(out))
	if len(probs) != 0 {
		t.Fatalf("rendered doc has problems: %v", probs)
	}
	if back.Status != Provisional || back.Rationale != d.Rationale || !slices.Equal(back.Changelog, d.Changelog) || back.Rules != d.Rules {
		t.Errorf("round trip lost edits: %+v", back)
	}
}

func TestRenderAddsMissingPartsInCanonicalPlaces(t *testing.T) {
	src := "# Caching\n\nSome prose a user wrote.\n\n## Notes\n\nkeep\n"
	d, _ := Parse("design/caching.md", []byte(src))
	d.Status = Provisional
	d.UpdatedBy, d.SourceTask = "design", "task_4"
	d.Themes = []string{"cache", "latency"}
	d.Rules = "1. Cache reads, never writes."
	d.Changelog = []Change{{Date: "2026-11-02", Writer: Design, Task: "task_4", Summary: "rules added"}}
	out := string(d.Render())
	want := "# Caching\n\n_Last updated by: design, task_4_\n_Status: provisional_\n_Themes: cache, latency_\n\nSome prose a user wrote.\n\n## Notes\n\nkeep\n\n## Rules\n\n1. Cache reads, never writes.\n\n## Changelog\n\n- 2026-11-02 design after task_4: rules added\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestRenderOfACodeBuiltDoc(t *testing.T) {
	d := &Doc{Path: "lessons/x.md", Title: "Retries", Status: Provisional, UpdatedBy: "internaliser", SourceTask: "t9",
		Rules: "- Retry 429 with backoff.", Changelog: []Change{{Date: "2026-11-03", Writer: Internaliser, Task: "t9", Milestone: "M3", Summary: "created"}}}
	got := string(d.Render())
	want := "# Retries\n\n_Last updated by: internaliser, t9_\n_Status: provisional_\n\n## Rules\n\n- Retry 429 with backoff.\n\n## Changelog\n\n- 2026-11-03 internaliser after t9 (milestone M3): created\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	back, probs := Parse(d.Path, []byte(got))
	if len(probs) != 0 || back.Title != d.Title || back.Rules != d.Rules || !slices.Equal(back.Changelog, d.Changelog) {
		t.Errorf("round trip: %v %+v", probs, back)
	}
}

func TestRenderKeepsCRLF(t *testing.T) {
	d, _ := Parse("conventions/x.md", []byte(strings.ReplaceAll(seedDoc, "\n", "\r\n")))
	d.Status = Deprecated
	out := string(d.Render())
	if strings.Count(out, "\n") != strings.Count(out, "\r\n") {
		t.Errorf("mixed line endings in:\n%q", out)
	}
	back, _ := Parse("conventions/x.md", []byte(out))
	if back.Status != Deprecated || back.Rules != d.Rules {
		t.Errorf("round trip: %+v", back)
	}
}

func TestParseIgnoresHeadingsInsideFences(t *testing.T) {
	src := "# T\n_Status: established_\n## Rules\n1. Run the script:\n```sh\n## not a section\n# not a title\n```\n## Examples\nx\n"
	d, probs := Parse("conventions/t.md", []byte(src))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if len(d.Sections()) != 2 || !strings.Contains(d.Rules, "## not a section") {
		t.Errorf("sections %d, rules %q", len(d.Sections()), d.Rules)
	}
}

func TestCoreFallsBackToFirstOtherSection(t *testing.T) {
	d, _ := Parse("lessons/x.md", []byte("# T\n_Status: established_\n## What we learned\n- Fact one.\n## Changelog\n"))
	if d.Core() != "- Fact one." {
		t.Errorf("core = %q", d.Core())
	}
}

func TestThemeWords(t *testing.T) {
	d, _ := Parse("design/data_model.md", []byte("# Storage Layer Decisions\n_Status: established_\n## HTTPServer handlers\nx\n"))
	got := d.ThemeWords()
	want := []string{"data", "decision", "handler", "http", "layer", "model", "server", "storage"}
	if !slices.Equal(got, want) {
		t.Errorf("derived themes = %q, want %q", got, want)
	}
	d.Themes = []string{"Caching", "read paths"}
	if got := d.ThemeWords(); !slices.Equal(got, []string{"caching", "path", "read"}) {
		t.Errorf("explicit themes = %q", got)
	}
}
