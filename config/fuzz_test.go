package config

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
)

func decodeBytes(data []byte) (*Config, *Sources, []Problem) {
	c, s, ps := Default(), newSources(), &problems{}
	d := &decoder{src: origin{layer: layerProject, file: "f.yaml"}, srcs: s, probs: ps}
	d.decodeFile(data, c)
	fillGateTimeouts(c, s)
	s.cfg = c
	for _, p := range validate(c, s) {
		ps.add(p)
	}
	return c, s, ps.list
}

// Any bytes give problems or a configuration, never a panic; problems name the
// file; a clean configuration prints as YAML that loads back to itself.
func FuzzDecodeFile(f *testing.F) {
	f.Add([]byte(Example()))
	f.Add([]byte("roles:\n  primary: &a {model: x, options: {k: [1, {b: null}]}}\n  summarizer: {<<: *a}\n"))
	f.Add([]byte("gates:\n  - {name: t, command: 'a: b # c'}\nsupervisors:\n  deny: ['[x', '**']\n"))
	f.Add([]byte("prompts:\n  global: |\n    a\n    b\n  project: \"\\t\\u00e9\"\n"))
	f.Add([]byte("limits:\n  max_tasks: 99999999999999999999\n  token_budgets: {qa: -1}\n"))
	f.Add([]byte("ollama: {host: '[::1]:1'}\noffline: ~\n---\n"))
	f.Add([]byte("x: *missing\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, s, ps := decodeBytes(data)
		for _, p := range ps {
			if p.File != "f.yaml" && p.File != "" {
				t.Fatalf("problem names file %q: %v", p.File, p)
			}
		}
		var b bytes.Buffer
		if err := Print(&b, c, s); err != nil {
			t.Fatal(err)
		}
		if len(ps) > 0 || hasSecrets(c) {
			return
		}
		c2, _, ps2 := decodeBytes(b.Bytes())
		if len(ps2) > 0 {
			t.Fatalf("printed configuration does not load: %v\n%s", ps2, b.String())
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the configuration:\n%s", b.String())
		}
	})
}

func hasSecrets(c *Config) bool {
	if c.OpenRouter.APIKey != "" || strings.Contains(c.Ollama.Host+c.OpenRouter.BaseURL, "@") {
		return true
	}
	for _, r := range c.Roles {
		if r.APIKey != "" || strings.Contains(r.BaseURL, "@") {
			return true
		}
	}
	return false
}

// Any key and value from a variable or a flag give problems or a value, never a panic.
func FuzzApplyText(f *testing.F) {
	f.Add("roles.primary.options.top_p", "0.9")
	f.Add("gates", "[{name: t, command: x}]")
	f.Add("supervisors.deny", "a,,b, [")
	f.Add("roles.primary.temperature", "NaN")
	f.Add("limits..max_tasks", "1")
	f.Add("roles.primary", "{model: x, bogus: 1}")
	f.Fuzz(func(t *testing.T, key, value string) {
		c, s, ps := Default(), newSources(), &problems{}
		d := &decoder{src: origin{layer: layerFlag, name: key}, srcs: s, probs: ps}
		d.applyText(c, key, value)
		s.cfg = c
		validate(c, s)
		if err := Print(io.Discard, c, s); err != nil {
			t.Fatal(err)
		}
	})
}
