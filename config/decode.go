package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// goccy/go-yaml's strict decoder stops at the first problem. To report every
// problem at once, the file is parsed into goccy's AST and walked here against
// the Config type, which also tells us the line of every value it sets.

// decoder applies one source (a file, a variable, a flag) onto a Config.
type decoder struct {
	src     origin
	srcs    *Sources
	probs   *problems
	anchors map[string]ast.Node
}

func (d *decoder) at(line int) origin {
	o := d.src
	if o.layer == layerUser || o.layer == layerProject {
		o.line = line
	}
	return o
}

func (d *decoder) problem(line int, key, msg, accepted string) {
	o := d.at(line)
	d.probs.add(Problem{File: o.problemFile(), Line: o.line, Key: key, Message: msg, Accepted: accepted})
}

// decodeFile parses one YAML file and applies it onto c.
func (d *decoder) decodeFile(data []byte, c *Config) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		line, msg := 0, err.Error()
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				line = tk.Position.Line
				// A key indented deeper than the one above continues that
				// value over lines ("5 max_retries"); the ':' that cannot
				// follow it is on the line to fix.
				if next := tk.Next; next != nil && next.Position != nil && next.Type == token.MappingValueType && next.Position.Line > line {
					line = next.Position.Line
					msg += " (this key is indented deeper than the one above it: align them)"
				}
			}
		}
		d.problem(line, "", "YAML syntax error: "+msg, "")
		return
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return // an empty file, or only comments
	}
	if len(docs) > 1 {
		d.problem(lineOf(docs[1].Body), "", "more than one YAML document (a '---' separator): keep one", "")
	}
	d.anchors = map[string]ast.Node{}
	ast.Walk(anchorCollector(d.anchors), docs[0].Body)
	body := d.resolve(docs[0].Body)
	if _, ok := body.(*ast.MappingNode); !ok {
		if isNull(body) {
			return
		}
		d.problem(lineOf(body), "", "the top level must be a mapping of keys, got "+describeNode(body),
			"a mapping with keys "+joinAccepted(fieldNames(reflect.TypeFor[Config]())))
		return
	}
	d.decode(body, reflect.ValueOf(c).Elem(), "", field{}, lineOf(body))
}

type anchorCollector map[string]ast.Node

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		a[an.Name.GetToken().Value] = an.Value
	}
	return a
}

// resolve looks through anchors, aliases and tags to the value node.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for range 32 {
		switch t := n.(type) {
		case *ast.AnchorNode:
			n = t.Value
		case *ast.TagNode:
			n = t.Value
		case *ast.AliasNode:
			if t.Value == nil {
				return n
			}
			target, ok := d.anchors[t.Value.GetToken().Value]
			if !ok {
				return n
			}
			n = target
		default:
			return n
		}
	}
	return n
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

func lineOf(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func describeNode(n ast.Node) string {
	switch t := n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.StringNode:
		return strconv.Quote(t.Value)
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.IntegerNode:
		return "the integer " + t.GetToken().Value
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "the number " + t.GetToken().Value
	case *ast.BoolNode:
		return "the boolean " + t.GetToken().Value
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.AliasNode:
		return "an alias to an unknown anchor"
	}
	return n.Type().String()
}

// accepted says what the key accepts: its spec, else its Go type.
func accepted(key string, t reflect.Type) string {
	if s, ok := specForExact(key); ok && s.accepted != "" {
		return s.accepted
	}
	return describeType(t)
}

func (d *decoder) typeProblem(n ast.Node, key string, t reflect.Type, line int) {
	d.problem(line, key, "expected "+shortType(t)+", got "+describeNode(n), accepted(key, t))
}

// decode applies node n onto v, the value at key. line is where the key is
// written (problems point there, as the user reads the file by keys).
func (d *decoder) decode(n ast.Node, v reflect.Value, key string, f field, line int) {
	n = d.resolve(n)
	if isNull(n) {
		d.setNull(v, key, f, line)
		return
	}
	t := v.Type()
	switch {
	case t.Kind() != reflect.Struct && t.Kind() != reflect.Map && t.Kind() != reflect.Slice: // durations too
		val, ok := d.scalar(n, t, key, line)
		if ok {
			d.assign(v, val, key, line)
		}
	case t.Kind() == reflect.Struct:
		d.decodeStruct(n, v, key, line)
	case t.Kind() == reflect.Map:
		d.decodeMap(n, v, key, f, line)
	default:
		d.decodeSlice(n, v, key, f, line)
	}
}

// entries lists a mapping's key/value pairs, merge keys (<<) expanded first so
// that the mapping's own keys win.
func (d *decoder) entries(m *ast.MappingNode, key string, depth int) []*ast.MappingValueNode {
	var merged, own []*ast.MappingValueNode
	for _, mv := range m.Values {
		if _, ok := mv.Key.(*ast.MergeKeyNode); !ok {
			own = append(own, mv)
			continue
		}
		if depth > 8 {
			d.problem(lineOf(mv.Key), key, "merge keys (<<) nested too deep", "")
			continue
		}
		var srcs []ast.Node
		switch src := d.resolve(mv.Value).(type) {
		case *ast.SequenceNode:
			srcs = src.Values
		default:
			srcs = []ast.Node{src}
		}
		for _, s := range srcs {
			if sm, ok := d.resolve(s).(*ast.MappingNode); ok {
				merged = append(merged, d.entries(sm, key, depth+1)...)
			} else {
				d.problem(lineOf(mv.Key), key, "a merge key (<<) must name a mapping, got "+describeNode(d.resolve(s)), "")
			}
		}
	}
	return append(merged, own...)
}

func keyText(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return k.GetToken().Value
}

func (d *decoder) decodeStruct(n ast.Node, v reflect.Value, key string, line int) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.typeProblem(n, key, v.Type(), line)
		return
	}
	t := v.Type()
	for _, mv := range d.entries(m, key, 0) {
		name := keyText(mv.Key)
		child := join(key, name)
		kl := lineOf(mv.Key)
		f, ok := fieldByName(t, name)
		if !ok {
			d.unknownKey(kl, child, name, fieldNames(t))
			continue
		}
		d.decode(mv.Value, v.Field(f.index), child, f, kl)
	}
}

func (d *decoder) unknownKey(line int, key, name string, known []string) {
	msg := "unknown key"
	if near := closest(name, known); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	d.problem(line, key, msg, joinAccepted(known))
}

func (d *decoder) decodeMap(n ast.Node, v reflect.Value, key string, f field, line int) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.typeProblem(n, key, v.Type(), line)
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	et := v.Type().Elem()
	for _, mv := range d.entries(m, key, 0) {
		name := keyText(mv.Key)
		child := join(key, name)
		kl := lineOf(mv.Key)
		if f.keys != nil && !slices.Contains(f.keys, name) {
			d.unknownKey(kl, child, name, f.keys)
			continue
		}
		if et.Kind() == reflect.Interface {
			d.setOption(v, name, d.resolve(mv.Value), child, kl)
			continue
		}
		elem := reflect.New(et).Elem()
		if cur := v.MapIndex(reflect.ValueOf(name)); cur.IsValid() {
			elem.Set(cur)
		}
		d.decode(mv.Value, elem, child, field{}, kl)
		v.SetMapIndex(reflect.ValueOf(name), elem)
	}
	d.srcs.set(key, d.at(line))
}

// setOption sets one entry of a free-form map (a role's options); null removes it.
func (d *decoder) setOption(m reflect.Value, name string, n ast.Node, key string, line int) {
	if isNull(n) {
		m.SetMapIndex(reflect.ValueOf(name), reflect.Value{})
		d.srcs.set(key, d.at(line))
		return
	}
	var val any
	if err := yaml.NodeToValue(n, &val); err != nil {
		d.problem(line, key, "cannot read value: "+err.Error(), "any YAML value")
		return
	}
	val = plainNumbers(val)
	m.SetMapIndex(reflect.ValueOf(name), reflect.ValueOf(&val).Elem())
	d.srcs.set(key, d.at(line))
}

func (d *decoder) decodeSlice(n ast.Node, v reflect.Value, key string, f field, line int) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.typeProblem(n, key, v.Type(), line)
		return
	}
	et := v.Type().Elem()
	if f.merge == "append" {
		for _, item := range seq.Values {
			il := lineOf(item)
			if il == 0 {
				il = line
			}
			val, ok := d.scalar(d.resolve(item), et, join(key, strconv.Itoa(v.Len())), il)
			if !ok {
				continue
			}
			d.appendItem(v, val, key, il)
		}
		d.srcs.set(key, d.at(line))
		return
	}
	out := reflect.MakeSlice(v.Type(), 0, len(seq.Values))
	d.srcs.forget(key)
	for _, item := range seq.Values {
		il := lineOf(item)
		if il == 0 {
			il = line
		}
		child := join(key, strconv.Itoa(out.Len()))
		o := d.at(il)
		o.whole = true
		d.srcs.set(child, o)
		elem := reflect.New(et).Elem()
		if et.Kind() == reflect.Struct {
			d.decode(item, elem, child, field{}, il)
		} else if val, ok := d.scalar(d.resolve(item), et, child, il); ok {
			elem.Set(val)
		}
		out = reflect.Append(out, elem)
	}
	v.Set(out)
	o := d.at(line)
	o.whole = true
	d.srcs.set(key, o)
}

// appendItem appends a string to an append-merged list unless it is there.
func (d *decoder) appendItem(list reflect.Value, val reflect.Value, key string, line int) {
	s := val.String()
	for i := range list.Len() {
		if list.Index(i).String() == s {
			return
		}
	}
	list.Set(reflect.Append(list, val))
	child := join(key, strconv.Itoa(list.Len()-1))
	d.srcs.set(child, d.at(line))
	if sp, ok := specFor(key); ok && sp.each != nil {
		if msg := sp.each(s); msg != "" {
			d.problem(line, child, msg, sp.accepted)
		}
	}
}

// setNull applies an explicit null: scalars become empty, a replaced list
// becomes empty, mappings and appended lists are left as they are.
func (d *decoder) setNull(v reflect.Value, key string, f field, line int) {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Struct, t.Kind() == reflect.Map:
		return
	case t.Kind() == reflect.Slice:
		if f.merge == "append" {
			return
		}
		d.srcs.forget(key)
		v.Set(reflect.MakeSlice(t, 0, 0))
		o := d.at(line)
		o.whole = true
		d.srcs.set(key, o)
		return
	}
	d.assign(v, reflect.Zero(t), key, line)
}

// assign sets a leaf, records its origin, and checks it against its spec.
func (d *decoder) assign(v reflect.Value, val reflect.Value, key string, line int) {
	sp, hasSpec := specFor(key)
	if hasSpec && sp.norm != nil && val.Kind() == reflect.String {
		if s, err := sp.norm(val.String()); err == nil {
			val = reflect.ValueOf(s)
		}
	}
	v.Set(val)
	d.srcs.set(key, d.at(line))
	if hasSpec && sp.check != nil {
		if msg := sp.check(v.Interface()); msg != "" {
			d.problem(line, key, msg, sp.accepted)
		}
	}
}
