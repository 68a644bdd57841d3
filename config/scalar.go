package config

import (
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Converting YAML scalars to the Go types of the configuration.

// scalar converts a scalar node to a value of type t, or reports why not.
func (d *decoder) scalar(n ast.Node, t reflect.Type, key string, line int) (reflect.Value, bool) {
	if t.Kind() == reflect.Pointer {
		if isNull(n) {
			return reflect.Zero(t), true
		}
		e, ok := d.scalar(n, t.Elem(), key, line)
		if !ok {
			return reflect.Value{}, false
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, true
	}
	bad := func() (reflect.Value, bool) {
		d.typeProblem(n, key, t, line)
		return reflect.Value{}, false
	}
	switch {
	case t == durationType:
		s, ok := stringValue(n)
		if !ok {
			if _, isInt := n.(*ast.IntegerNode); isInt {
				d.problem(line, key, "expected a duration, got "+describeNode(n)+": add a unit (s, m, h), e.g. 90s", accepted(key, t))
				return reflect.Value{}, false
			}
			return bad()
		}
		dur, err := time.ParseDuration(s)
		if err != nil {
			d.problem(line, key, fmt.Sprintf("%q is not a duration", s), accepted(key, t))
			return reflect.Value{}, false
		}
		return reflect.ValueOf(dur), true
	case t.Kind() == reflect.String:
		s, ok := stringValue(n)
		if !ok {
			if _, isMap := n.(*ast.MappingNode); !isMap {
				if _, isSeq := n.(*ast.SequenceNode); !isSeq {
					d.problem(line, key, "expected a string, got "+describeNode(n)+": quote it", accepted(key, t))
					return reflect.Value{}, false
				}
			}
			return bad()
		}
		return reflect.ValueOf(s).Convert(t), true
	case t.Kind() == reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			return bad()
		}
		return reflect.ValueOf(b.Value), true
	case t.Kind() == reflect.Int:
		in, ok := n.(*ast.IntegerNode)
		if !ok {
			return bad()
		}
		switch x := in.Value.(type) {
		case int64:
			if x >= math.MinInt && x <= math.MaxInt {
				return reflect.ValueOf(int(x)), true
			}
		case uint64:
			if x <= math.MaxInt {
				return reflect.ValueOf(int(x)), true
			}
		}
		d.problem(line, key, "integer "+in.GetToken().Value+" is out of range", accepted(key, t))
		return reflect.Value{}, false
	case t.Kind() == reflect.Float64:
		switch x := n.(type) {
		case *ast.FloatNode:
			return reflect.ValueOf(x.Value), true
		case *ast.IntegerNode:
			switch i := x.Value.(type) {
			case int64:
				return reflect.ValueOf(float64(i)), true
			case uint64:
				return reflect.ValueOf(float64(i)), true
			}
		case *ast.InfinityNode, *ast.NanNode:
			d.problem(line, key, "not a finite number", accepted(key, t))
			return reflect.Value{}, false
		}
		return bad()
	}
	return bad()
}

func stringValue(n ast.Node) (string, bool) {
	switch t := n.(type) {
	case *ast.StringNode:
		return t.Value, true
	case *ast.LiteralNode:
		if t.Value == nil {
			return "", true
		}
		return t.Value.Value, true
	}
	return "", false
}

// plainNumbers turns the YAML decoder's uint64 and int64 into int where they
// fit, so option values are what a Go reader expects, inside lists and maps too.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case uint64:
		if x <= math.MaxInt {
			return int(x)
		}
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x)
		}
	case []any:
		for i := range x {
			x[i] = plainNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = plainNumbers(x[k])
		}
	}
	return v
}
