package knowledge

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that an untouched doc renders to
// the bytes read, and that an edited doc is stable: parsing its rendering
// gives back the edited fields, and rendering that again gives the same bytes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		seedDoc,
		strings.ReplaceAll(seedDoc, "\n", "\r\n"),
		"",
		"# T\n",
		"---\na: b\n---\n# T\n_Status: established_\n",
		"# T\n_Status: established_\n## Rules\n```\n## x\n",
		"_Status: provisional_\n## Notes\nx\n## Changelog\n- bad entry\n",
		"# T\n```\n_Status: x_\n## Rules\n",
		"# A\n# B\n##C\n## Rules\n1. a\n   continued\n2. b\n\n## Examples\n~~~\n## y\n~~~\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, edit uint8) {
		d, _ := Parse("conventions/f.md", data)
		if got := d.Render(); !bytes.Equal(got, data) {
			t.Fatalf("untouched render differs:\n in %q\nout %q", data, got)
		}
		_ = d.ThemeWords()
		_ = d.Summary()
		_ = splitItems(d.Core())

		// Apply an edit chosen by the fuzzer, with sane values.
		if edit&1 != 0 {
			d.Status = Deprecated
		}
		if edit&2 != 0 {
			d.Rules = "1. Edited rule.\n2. Another."
		}
		if edit&4 != 0 {
			d.Changelog = append(d.Changelog, Change{Date: "2026-11-05", Writer: CodeStyle, Task: "task_9", Milestone: "M3", Summary: "fuzz edit"})
		}
		if edit&8 != 0 {
			d.Title = "Edited Title"
		}
		if edit&16 != 0 {
			d.Themes = []string{"alpha", "beta"}
		}
		if edit&32 != 0 {
			d.Examples = "Good: x\nBad: y"
		}
		if edit&64 != 0 {
			d.UpdatedBy, d.SourceTask = "design", "task_10"
		}
		out := d.Render()
		back, _ := Parse(d.Path, out)
		if again := back.Render(); !bytes.Equal(again, out) {
			t.Fatalf("second render differs")
		}
		back2, _ := Parse(d.Path, back.Render())
		if back2.Title != back.Title || back2.Status != back.Status || back2.Rules != back.Rules || !slices.Equal(back2.Changelog, back.Changelog) {
			t.Fatalf("unstable parse of a rendering")
		}
		// Edited fields survive, unless the original text fought the edit in a
		// way Render cannot undo (an unclosed fence swallowing what follows).
		if bytes.Contains(data, []byte("```")) || bytes.Contains(data, []byte("~~~")) || bytes.Contains(data, []byte("\r")) {
			return
		}
		if edit&1 != 0 && back.Status != Deprecated {
			t.Fatalf("status edit lost: %q\n%s", back.Status, out)
		}
		if edit&2 != 0 && back.Rules != d.Rules {
			t.Fatalf("rules edit lost: %q\n%s", back.Rules, out)
		}
		if edit&4 != 0 && (len(back.Changelog) == 0 || back.Changelog[len(back.Changelog)-1].Summary != "fuzz edit") {
			t.Fatalf("changelog edit lost: %+v\n%s", back.Changelog, out)
		}
		if edit&8 != 0 && back.Title != "Edited Title" {
			t.Fatalf("title edit lost: %q\n%s", back.Title, out)
		}
		if edit&16 != 0 && !slices.Equal(back.Themes, d.Themes) {
			t.Fatalf("themes edit lost: %q\n%s", back.Themes, out)
		}
	})
}
