package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

const docsPath = "../docs/configuration.md"

func TestExampleLoadsWithoutProblems(t *testing.T) {
	t.Parallel()
	l := fixture{user: Example(), env: map[string]string{"OPENROUTER_API_KEY": "sk-or-v1-0123456789abcdef"}}.mustLoad(t)
	if w := l.src.Warnings(); len(w) != 0 {
		t.Errorf("the example draws warnings: %v", w)
	}
}

// Every key of the schema is written in the example (API keys only in a
// comment, on purpose), so the example documents them all.
func TestExampleSetsEveryKey(t *testing.T) {
	t.Parallel()
	l := fixture{user: Example()}.mustLoad(t)
	set := map[string]bool{}
	for key, o := range l.src.origins {
		if o.layer == layerUser {
			set[key] = true
		}
	}
	for _, sk := range schemaKeys() {
		if sk.container || sk.field.secret == "key" {
			continue
		}
		found := false
		for key := range set {
			if matchPattern(sk.pattern, key) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the example does not set %s", sk.pattern)
		}
	}
	for _, key := range []string{"openrouter.api_key", "roles.primary.api_key"} {
		if l.src.lookup(key).layer != layerDefault {
			t.Errorf("the example sets the secret %s: it must only mention it in a comment", key)
		}
	}
}

// The example's values are the defaults, except on lines that say "example:".
func TestExampleEqualsDefaultsWhereItSaysSo(t *testing.T) {
	t.Parallel()
	l := fixture{user: Example()}.mustLoad(t)
	lines := strings.Split(Example(), "\n")
	def := Default()
	differs := 0
	check := func(key string, got, want any) {
		if reflect.DeepEqual(got, want) {
			return
		}
		differs++
		o := l.src.lookup(key)
		if o.layer != layerUser || o.line < 1 || o.line > len(lines) {
			t.Errorf("%s differs from the default but has origin %s", key, o)
			return
		}
		if !strings.Contains(lines[o.line-1], "example:") {
			t.Errorf("example line %d sets %s to %v, not the default %v, without saying \"example:\"", o.line, key, got, want)
		}
	}
	check("gates", l.cfg.Gates, def.Gates)
	walkLeaves(reflect.ValueOf(l.cfg).Elem(), "", field{}, func(key string, v reflect.Value, f field) {
		if strings.HasPrefix(key, "gates.") {
			return // compared as a whole
		}
		want := valueAt(def, key)
		if !want.IsValid() { // a map entry the defaults lack (implementor.cli.env)
			check(key, v.Interface(), nil)
			return
		}
		check(key, v.Interface(), want.Interface())
	})
	if differs == 0 {
		t.Error("the example shows no non-default value: the gates example is gone?")
	}
}

// docs/configuration.md carries the example and the key reference verbatim.
// go test -update rewrites them there.
func TestDocsCarryTheExampleAndTheReference(t *testing.T) {
	t.Parallel()
	example := "```yaml\n" + Example() + "```\n"
	checkGenerated(t, docsPath, map[string]string{"reference": Reference(), "example": example})
	// The README shows the complete example too.
	checkGenerated(t, "../README.md", map[string]string{"example": example})
}

// checkGenerated compares (or, with -update, rewrites) the blocks of path
// between their BEGIN/END GENERATED markers.
func checkGenerated(t *testing.T, path string, blocks map[string]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, name := range []string{"reference", "example"} {
		body, ok := blocks[name]
		if !ok {
			continue
		}
		begin := "<!-- BEGIN GENERATED " + name + ": go test ./config -update -->\n"
		end := "<!-- END GENERATED " + name + " -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("%s lacks the markers %q … %q", path, begin, end)
		}
		if got := doc[i+len(begin) : j]; got != body {
			if !*update {
				t.Errorf("the %s in %s is out of date: run go test ./config -update", name, path)
				continue
			}
			doc = doc[:i+len(begin)] + body + doc[j:]
		}
	}
	if *update && doc != string(data) {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReferenceListsEveryKeyWithItsDefault(t *testing.T) {
	t.Parallel()
	ref := Reference()
	for _, want := range []string{
		"| `roles.*.model` | string | primary: `qwen2.5-coder:14b`; planner: empty; summarizer: `qwen2.5-coder:1.5b`; supervisor: `anthropic/claude-sonnet-4.5`; embedding: `nomic-embed-text` |",
		"| `limits.max_wall_time` | duration | `4h` |",
		"| `supervisors.budget_usd` | number | `2` |",
		"| `gates` | list of mappings | `[]` |",
		"| `gates.*.timeout` | duration | `10m` |",
		"| `roles.*.temperature` | number or null | primary: `0.2`; planner: `0.2`; summarizer: `0.1`; supervisor: `0.2`; embedding: `null` |",
	} {
		if !strings.Contains(ref, want) {
			t.Errorf("reference lacks %q", want)
		}
	}
	if n := strings.Count(ref, "\n"); n != len(specs())+2 {
		t.Errorf("reference has %d lines, want one per spec plus the header (%d)", n, len(specs())+2)
	}
}
