package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// Values from environment variables and flags arrive as text addressed by a
// dotted key. Scalars are read with Go's parsers (a model name stays a string
// whatever it looks like); lists, mappings and options are read as YAML, so
// `[{name: test, command: go test ./...}]` sets the gates.

// applyText sets the value at the dotted key from its text.
func (d *decoder) applyText(c *Config, key, raw string) {
	if key == "" {
		d.problem(0, "", "an empty key", "")
		return
	}
	d.anchors = map[string]ast.Node{}
	d.walkSet(reflect.ValueOf(c).Elem(), strings.Split(key, "."), "", field{}, raw)
}

func (d *decoder) walkSet(v reflect.Value, segs []string, key string, f field, raw string) {
	if len(segs) == 0 {
		d.setText(v, key, f, raw)
		return
	}
	seg := segs[0]
	child := join(key, seg)
	t := v.Type()
	switch {
	case t.Kind() == reflect.Struct:
		sf, ok := fieldByName(t, seg)
		if !ok {
			d.unknownKey(0, child, seg, fieldNames(t))
			return
		}
		d.walkSet(v.Field(sf.index), segs[1:], child, sf, raw)
	case t.Kind() == reflect.Map:
		if f.keys != nil && !slices.Contains(f.keys, seg) {
			d.unknownKey(0, child, seg, f.keys)
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		if t.Elem().Kind() == reflect.Interface {
			if len(segs) > 1 {
				d.problem(0, join(child, strings.Join(segs[1:], ".")), "an option is set as a whole: use "+child+" with a YAML value", "")
				return
			}
			n, ok := d.parseText(raw, child)
			if ok {
				d.setOption(v, seg, n, child, 0)
			}
			return
		}
		elem := reflect.New(t.Elem()).Elem()
		if cur := v.MapIndex(reflect.ValueOf(seg)); cur.IsValid() {
			elem.Set(cur)
		}
		d.walkSet(elem, segs[1:], child, field{}, raw)
		v.SetMapIndex(reflect.ValueOf(seg), elem)
	case t.Kind() == reflect.Slice:
		d.problem(0, child, "a list is set as a whole: use "+key+" with a YAML list", accepted(key, t))
	default:
		d.problem(0, child, "unknown key: "+key+" holds a single value", "")
	}
}

// parseText reads text as a YAML value (a list, a mapping, an option).
func (d *decoder) parseText(raw, key string) (ast.Node, bool) {
	f, err := parser.ParseBytes([]byte(raw), 0)
	if err != nil {
		d.problem(0, key, "cannot read the value as YAML: "+textutil.FirstLine(err.Error()), "")
		return nil, false
	}
	if len(f.Docs) == 0 || f.Docs[0] == nil || f.Docs[0].Body == nil {
		return nil, true
	}
	return f.Docs[0].Body, true
}

func (d *decoder) setText(v reflect.Value, key string, f field, raw string) {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Slice && f.merge == "append" && !strings.HasPrefix(strings.TrimSpace(raw), "["):
		// A comma-separated list, the usual shape of a list in a variable.
		for _, item := range strings.Split(raw, ",") {
			if item = strings.TrimSpace(item); item != "" {
				d.appendItem(v, reflect.ValueOf(item), key, 0)
			}
		}
		d.srcs.set(key, d.at(0))
		return
	case t != durationType && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map || t.Kind() == reflect.Slice):
		n, ok := d.parseText(raw, key)
		if ok {
			d.decode(n, v, key, f, 0)
		}
		return
	}
	val, err := parseScalarText(t, raw)
	if err != nil {
		d.problem(0, key, err.Error(), accepted(key, t))
		return
	}
	d.assign(v, val, key, 0)
}

func parseScalarText(t reflect.Type, raw string) (reflect.Value, error) {
	s := strings.TrimSpace(raw)
	switch {
	case t == durationType:
		dur, err := time.ParseDuration(s)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%q is not a duration", raw)
		}
		return reflect.ValueOf(dur), nil
	case t.Kind() == reflect.Pointer:
		if s == "" || s == "null" || s == "~" {
			return reflect.Zero(t), nil
		}
		e, err := parseScalarText(t.Elem(), raw)
		if err != nil {
			return reflect.Value{}, err
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, nil
	case t.Kind() == reflect.String:
		return reflect.ValueOf(raw), nil
	case t.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%q is not true or false", raw)
		}
		return reflect.ValueOf(b), nil
	case t.Kind() == reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%q is not an integer", raw)
		}
		return reflect.ValueOf(n), nil
	case t.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%q is not a number", raw)
		}
		return reflect.ValueOf(x), nil
	}
	return reflect.Value{}, fmt.Errorf("cannot set a %s from text", t)
}
