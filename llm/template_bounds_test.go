package llm

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// bomb is the issue's override: levels of {{define}}, each calling the one
// below ten times; 10^levels copies of ten bytes.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString(`{{define "l0"}}0123456789{{end}}`)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, `{{define "l%d"}}`, i)
		for range 10 {
			fmt.Fprintf(&b, `{{template "l%d"}}`, i-1)
		}
		b.WriteString(`{{end}}`)
	}
	fmt.Fprintf(&b, `QA {{template "l%d"}}`, levels)
	return b.String()
}

// A repository's override that would run away is refused when it is read,
// naming the file and why; the process's memory stays where it was.
func TestARunawayPromptOverrideIsRefusedBeforeItRuns(t *testing.T) {
	t.Parallel()
	deep := `{{define "l0"}}x{{end}}`
	for i := 1; i <= 10; i++ {
		deep += fmt.Sprintf(`{{define "l%d"}}{{template "l%d"}}{{end}}`, i, i-1)
	}
	deep += `{{template "l10"}}`
	cases := map[string]struct{ text, want string }{
		// 10^6 calls, 10 MB: small enough to run without the bound.
		"nested template calls": {bomb(6), "more than 20000 steps"},
		"a recursive template":  {`{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`, "calls itself"},
		"a deep chain":          {deep, "nested more than 8 calls deep"},
		"a loop over a number":  {`{{range 100000000}}x{{end}}`, "more than 20000 steps"},
		"a file too large":      {strings.Repeat("x", MaxTemplateBytes+1), "over the 65536"},
	}
	for name, tc := range cases {
		dir := t.TempDir()
		file := filepath.Join(dir, "qa.tmpl")
		if err := os.WriteFile(file, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := NewComposer(builtinPrompts, dir, "", "")
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s and %q", name, err, file, tc.want)
		}
	}
}

// The issue's own size (ten levels) is refused too, without the memory it
// took (1.36 GB).
func TestTheIssuesTemplateBombCostsNoMemory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "qa.tmpl"), []byte(bomb(10)), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := NewComposer(builtinPrompts, dir, "", ""); err == nil {
		t.Fatal("the bomb was accepted")
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("refusing it allocated %d MB", grew>>20)
	}
}

// A template that links out of the repository is not read: its target's
// text would go into prompts.
func TestAPromptOverrideThatIsALinkIsRefused(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(outside, []byte("-----BEGIN KEY-----"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "qa.tmpl")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewComposer(builtinPrompts, dir, "", ""); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("error %v", err)
	}
}

// Data-driven output is bounded while the template runs.
func TestATemplatesOutputIsBoundedWhileItRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "qa.tmpl"), []byte(`{{range .}}{{.}}{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := NewComposer(builtinPrompts, dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	big := make([]string, 2000)
	for i := range big {
		big[i] = strings.Repeat("y", 1024)
	}
	if _, err := c.Render("qa", "", big); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("error %v", err)
	}
	if out, err := c.Render("qa", "", big[:10]); err != nil || len(out) != 10*1024 {
		t.Fatalf("a normal render: %d bytes, %v", len(out), err)
	}
}
