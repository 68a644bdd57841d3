package config

import (
	_ "embed"
	"fmt"
	"reflect"
	"strings"
)

//go:embed example.yaml
var example string

// Example returns a complete, commented lemmings.yaml: every key, at its
// default value except where a comment says "example:". The same text is in
// docs/configuration.md (a test keeps them equal).
func Example() string { return example }

// Reference returns the Markdown table of every key: type, default, accepted
// values and meaning. docs/configuration.md embeds it (a test keeps it current).
func Reference() string {
	d := Default()
	var b strings.Builder
	b.WriteString("| key | type | default | accepted | in a project file | meaning |\n|---|---|---|---|---|---|\n")
	for _, sk := range schemaKeys() {
		sp, ok := specForExact(sk.pattern)
		if !ok {
			continue
		}
		acc := sp.accepted
		if acc == "" {
			acc = describeType(sk.typ)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", sk.pattern, typeName(sk.typ),
			cell(defaultText(d, sk)), cell(acc), trustText(sk.pattern), cell(sp.doc))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// defaultText shows the default of a key pattern; for "*" patterns, the value
// of each map key ("primary: …; summarizer: …") unless they are all equal.
func defaultText(d *Config, sk schemaKey) string {
	if sk.container {
		v := valueAt(d, sk.pattern)
		if v.Kind() == reflect.Slice && v.Len() == 0 {
			return "`[]`"
		}
		return "see the rows below"
	}
	if strings.HasPrefix(sk.pattern, "gates.") {
		if sk.pattern == "gates.*.timeout" {
			return "`" + formatDuration(DefaultGateTimeout) + "`"
		}
		return "—"
	}
	keys := expandPattern(d, sk.pattern)
	if len(keys) == 0 {
		return "none" // a map empty by default (implementor.cli.env)
	}
	vals := make([]string, len(keys))
	same := true
	for i, k := range keys {
		vals[i] = showDefault(valueAt(d, k), sk.field)
		same = same && vals[i] == vals[0]
	}
	if len(keys) == 1 || same {
		return vals[0]
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		ks := strings.Split(sk.pattern, ".")
		segs := strings.Split(k, ".")
		for j := range ks {
			if ks[j] == "*" {
				parts[i] = segs[j] + ": " + vals[i]
			}
		}
	}
	return strings.Join(parts, "; ")
}

func showDefault(v reflect.Value, f field) string {
	switch {
	case v.Kind() == reflect.Slice:
		items := make([]string, v.Len())
		for i := range v.Len() {
			items[i] = formatScalar(v.Index(i), field{})
		}
		return "`[" + strings.Join(items, ", ") + "]`"
	case isFreeMap(v.Type()):
		return "`{}`"
	case v.Kind() == reflect.String && v.String() == "":
		return "empty"
	}
	return "`" + formatScalar(v, f) + "`"
}

// valueAt returns the value at a dotted key of c (which must exist).
func valueAt(c *Config, key string) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for _, seg := range strings.Split(key, ".") {
		switch v.Kind() {
		case reflect.Struct:
			f, _ := fieldByName(v.Type(), seg)
			v = v.Field(f.index)
		case reflect.Map:
			v = v.MapIndex(reflect.ValueOf(seg))
		}
	}
	return v
}
