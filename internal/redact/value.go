package redact

import (
	"fmt"
	"reflect"
	"slices"
)

// Value returns v with every string in it redacted (exported fields of
// structs, elements of slices, arrays and maps, through pointers and
// interfaces), for data about to be rendered — a web page's view, where
// redacting the HTML afterwards would miss secrets the escaping changed.
// The strings are redacted in one pass; when none holds a secret, v itself is
// returned, else a copy (v is never modified). Map keys are kept.
func Value[T any](r *Redactor, v T) T {
	rv := reflect.ValueOf(&v).Elem()
	var texts []string
	collect(rv, &texts, 0)
	if len(texts) == 0 {
		return v
	}
	red := r.strings(texts)
	if slices.Equal(red, texts) {
		return v
	}
	next := 0
	out := rebuild(rv, red, &next, 0)
	return out.Interface().(T)
}

// MapStrings returns v with f applied to every string in it, walked as
// Value walks (v is never modified; v itself when f changes nothing):
// a web page's view made terminal- and browser-safe (termsafe.String).
func MapStrings[T any](v T, f func(string) string) T {
	rv := reflect.ValueOf(&v).Elem()
	var texts []string
	collect(rv, &texts, 0)
	out := make([]string, len(texts))
	changed := false
	for i, t := range texts {
		out[i] = f(t)
		changed = changed || out[i] != t
	}
	if !changed {
		return v
	}
	next := 0
	return rebuild(rv, out, &next, 0).Interface().(T)
}

// maxDepth bounds the walk (views are shallow; a cycle would not be).
const maxDepth = 32

// collect appends the strings of v in a fixed order (map keys sorted).
func collect(v reflect.Value, out *[]string, depth int) {
	if depth > maxDepth || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		*out = append(*out, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collect(v.Elem(), out, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				collect(v.Field(i), out, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, not text
		}
		for i := range v.Len() {
			collect(v.Index(i), out, depth+1)
		}
	case reflect.Map:
		for _, k := range sortedKeys(v) {
			collect(v.MapIndex(k), out, depth+1)
		}
	}
}

// rebuild returns a copy of v with its strings taken from red, in collect's order.
func rebuild(v reflect.Value, red []string, next *int, depth int) reflect.Value {
	if depth > maxDepth || !v.IsValid() {
		return v
	}
	switch v.Kind() {
	case reflect.String:
		s := red[*next]
		*next++
		nv := reflect.New(v.Type()).Elem()
		nv.SetString(s)
		return nv
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		nv := reflect.New(v.Type().Elem())
		nv.Elem().Set(rebuild(v.Elem(), red, next, depth+1))
		return nv
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		nv := reflect.New(v.Type()).Elem()
		nv.Set(rebuild(v.Elem(), red, next, depth+1))
		return nv
	case reflect.Struct:
		nv := reflect.New(v.Type()).Elem()
		nv.Set(v) // unexported fields as they are
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				nv.Field(i).Set(rebuild(v.Field(i), red, next, depth+1))
			}
		}
		return nv
	case reflect.Slice:
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
			return v
		}
		nv := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			nv.Index(i).Set(rebuild(v.Index(i), red, next, depth+1))
		}
		return nv
	case reflect.Array:
		nv := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			nv.Index(i).Set(rebuild(v.Index(i), red, next, depth+1))
		}
		return nv
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		nv := reflect.MakeMapWithSize(v.Type(), v.Len())
		for _, k := range sortedKeys(v) {
			nv.SetMapIndex(k, rebuild(v.MapIndex(k), red, next, depth+1))
		}
		return nv
	}
	return v
}

// sortedKeys orders a map's keys by their printed form: both passes must
// visit the values in the same order.
func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int {
		x, y := keyString(a), keyString(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return keys
}

func keyString(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	return fmt.Sprint(k.Interface())
}
