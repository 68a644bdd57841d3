package config

import (
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// PrintJSON writes the effective configuration as JSON lines, one per value:
// {"key": "roles.primary.model", "value": …, "from": "lemmings.yaml:3"}.
// Secrets are masked as in Print.
func PrintJSON(w io.Writer, c *Config, s *Sources) error {
	enc := json.NewEncoder(w)
	p := &printer{w: w, s: s}
	p.onValue = func(key, text string) {
		if p.err != nil {
			return
		}
		p.err = enc.Encode(map[string]any{"key": key, "value": scalarOf(key, text), "from": s.lookup(key).String()})
	}
	p.fields(reflect.ValueOf(c).Elem(), "", 0)
	return p.err
}

// scalarOf reads back the value of one printed line ("name: value",
// "- value" for a list item, "- name: value" for a field of one).
func scalarOf(key, text string) any {
	rest := strings.TrimPrefix(strings.TrimPrefix(text, "- "), "  ")
	last := key[strings.LastIndex(key, ".")+1:]
	if _, err := strconv.Atoi(last); err != nil {
		if _, v, ok := strings.Cut(rest, ": "); ok {
			rest = v
		}
	}
	var v any
	if err := yaml.Unmarshal([]byte(rest), &v); err != nil {
		return rest
	}
	return v
}
