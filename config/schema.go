package config

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The schema of the configuration is the Config type itself: yaml tags give
// the keys, `merge` says how a list combines across sources, `keys` lists the
// accepted keys of a map, `secret` marks values masked when printed.

var durationType = reflect.TypeFor[time.Duration]()

type field struct {
	name   string
	index  int
	merge  string   // slices: "append" or "replace"
	keys   []string // maps: accepted keys in canonical order; nil = any key
	secret string   // "key" (mask all but the last 4) or "url" (mask a password)
}

func fieldsOf(t reflect.Type) []field {
	out := make([]field, 0, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := field{name: name, index: i, merge: sf.Tag.Get("merge"), secret: sf.Tag.Get("secret")}
		if k := sf.Tag.Get("keys"); k != "" {
			f.keys = strings.Split(k, ",")
		}
		out = append(out, f)
	}
	return out
}

func fieldByName(t reflect.Type, name string) (field, bool) {
	for _, f := range fieldsOf(t) {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

func fieldNames(t reflect.Type) []string {
	fs := fieldsOf(t)
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

// isLeafType reports whether values of t are set as a whole (scalars, string
// lists, free-form maps) rather than walked into.
func isLeafType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		return false
	case reflect.Map:
		return t.Elem().Kind() == reflect.Interface
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Struct
	}
	return true
}

func isFreeMap(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Interface
}

// mapKeysInOrder returns the keys of a map value: the canonical order of f.keys
// first, then any others sorted.
func mapKeysInOrder(v reflect.Value, f field) []string {
	present := map[string]bool{}
	for _, k := range v.MapKeys() {
		present[k.String()] = true
	}
	var out []string
	for _, k := range f.keys {
		if present[k] {
			out = append(out, k)
			delete(present, k)
		}
	}
	rest := make([]string, 0, len(present))
	for k := range present {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// leafPatterns lists every settable key pattern of the schema in document
// order, with "*" standing for a map key or a list index. Containers that are
// walked into (roles, gates, token_budgets) are listed too, flagged.
type schemaKey struct {
	pattern   string
	typ       reflect.Type
	field     field
	container bool
}

func schemaKeys() []schemaKey {
	var out []schemaKey
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for _, f := range fieldsOf(t) {
			ft := t.Field(f.index).Type
			key := join(prefix, f.name)
			switch {
			case isLeafType(ft):
				out = append(out, schemaKey{pattern: key, typ: ft, field: f})
			case ft.Kind() == reflect.Struct:
				walk(ft, key)
			case ft.Kind() == reflect.Map:
				out = append(out, schemaKey{pattern: key, typ: ft, field: f, container: true})
				if ft.Elem().Kind() == reflect.Struct {
					walk(ft.Elem(), key+".*")
				} else {
					out = append(out, schemaKey{pattern: key + ".*", typ: ft.Elem(), field: field{name: "*"}})
				}
			case ft.Kind() == reflect.Slice:
				out = append(out, schemaKey{pattern: key, typ: ft, field: f, container: true})
				walk(ft.Elem(), key+".*")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// matchPattern reports whether a dotted key matches a pattern where "*"
// matches one segment.
func matchPattern(pattern, key string) bool {
	for {
		pi, ki := strings.IndexByte(pattern, '.'), strings.IndexByte(key, '.')
		if (pi < 0) != (ki < 0) {
			return false
		}
		if pi < 0 {
			return pattern == "*" || pattern == key
		}
		if p := pattern[:pi]; p != "*" && p != key[:ki] {
			return false
		}
		pattern, key = pattern[pi+1:], key[ki+1:]
	}
}

// keyExists reports whether the dotted key names a value in c.
func keyExists(c *Config, key string) bool {
	if key == "" {
		return false
	}
	v := reflect.ValueOf(c).Elem()
	for _, seg := range strings.Split(key, ".") {
		switch v.Kind() {
		case reflect.Struct:
			f, ok := fieldByName(v.Type(), seg)
			if !ok {
				return false
			}
			v = v.Field(f.index)
		case reflect.Map:
			e := v.MapIndex(reflect.ValueOf(seg))
			if !e.IsValid() {
				return false
			}
			if v.Type().Elem().Kind() == reflect.Interface {
				// An option's value is a leaf, whatever is inside it.
				v = reflect.ValueOf(0)
				continue
			}
			v = e
		case reflect.Slice:
			if v.Type().Elem().Kind() != reflect.Struct {
				n, err := strconv.Atoi(seg)
				if err != nil || n < 0 || n >= v.Len() {
					return false
				}
				v = reflect.ValueOf(0)
				continue
			}
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= v.Len() {
				return false
			}
			v = v.Index(n)
		default:
			return false
		}
	}
	return true
}

// describeType says in words what a value of type t must be.
func describeType(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration such as 90s, 5m or 1h30m"
	case t.Kind() == reflect.Pointer:
		return describeType(t.Elem()) + " or null"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Int:
		return "an integer"
	case t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "a list of strings"
	case t.Kind() == reflect.Slice:
		return "a list of mappings with keys " + joinAccepted(fieldNames(t.Elem()))
	case t.Kind() == reflect.Map:
		return "a mapping"
	case t.Kind() == reflect.Struct:
		return "a mapping with keys " + joinAccepted(fieldNames(t))
	}
	return t.String()
}

// shortType names the kind of value t needs, for "expected …" messages (the
// accepted part of the problem gives the detail).
func shortType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	}
	return describeType(t)
}

// typeName is the short type shown in the key reference.
func typeName(t reflect.Type) string {
	switch {
	case t == durationType:
		return "duration"
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem()) + " or null"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Int:
		return "integer"
	case t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "list of strings"
	case t.Kind() == reflect.Slice:
		return "list of mappings"
	case t.Kind() == reflect.Map:
		return "mapping"
	}
	return "mapping"
}
