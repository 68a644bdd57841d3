package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// mergeResults joins the results of a parallel step. With WithMerge the user's
// function decides; otherwise each field follows its reducer (statetype.go),
// applied to what each task changed in its own input (ins[k], the step's
// state for a node reached by an edge, the Send's state for a Send task):
// chs[k] are those changes. Fields kept out of checkpoints (json:"-") keep
// the step's input value.
func (r *runner[S]) mergeResults(base S, names []string, ins, outs []S, chs [][]change) (S, error) {
	if r.c.merge != nil {
		out, err := r.c.merge(base, names, outs)
		if err != nil {
			return base, fmt.Errorf("graph: run %s: merge of %v: %w", r.runID, names, err)
		}
		return out, nil
	}
	result := base
	rv := reflect.ValueOf(&result).Elem()
	for _, f := range r.c.plan.fields {
		var writers []int
		var fchs []change
		for k, d := range chs {
			for _, c := range d {
				if c.field == f.name {
					writers = append(writers, k)
					fchs = append(fchs, c)
				}
			}
		}
		if len(writers) == 0 {
			continue
		}
		who := make([]string, len(writers))
		for i, k := range writers {
			who[i] = names[k]
		}
		field := func(k int) reflect.Value { return reflect.ValueOf(&outs[k]).Elem().Field(f.index) }
		input := func(k int) reflect.Value { return reflect.ValueOf(&ins[k]).Elem().Field(f.index) }
		switch f.red {
		case reduceAppend:
			cur := rv.Field(f.index)
			L := cur.Len()
			acc := cur.Slice3(0, L, L)
			for i, k := range writers {
				if fchs[i].op != opAppend {
					return base, &MergeError{Field: f.name, Nodes: []string{names[k]}, Why: "the field is declared graph:\"append\" but the node changed or removed existing elements"}
				}
				v := field(k)
				acc = reflect.AppendSlice(acc, v.Slice(input(k).Len(), v.Len()))
			}
			rv.Field(f.index).Set(acc)
		case reduceMerge:
			m, err := mergeMaps(rv.Field(f.index), writers, names, input, field)
			if err != nil {
				return base, &MergeError{Field: f.name, Nodes: who, Why: err.Error()}
			}
			rv.Field(f.index).Set(m)
		default:
			for i := 1; i < len(fchs); i++ {
				if !bytes.Equal(fchs[i].value, fchs[0].value) {
					return base, &MergeError{Field: f.name, Nodes: who,
						Why: "they wrote different values; declare a reducer (graph:\"append\" for slices, graph:\"merge\" for maps) or use WithMerge"}
				}
			}
			rv.Field(f.index).Set(field(writers[0]))
		}
	}
	return result, nil
}

// mergeMaps joins maps key by key: each branch's added, changed and deleted
// keys (against its input map) apply to a copy of the base map; two branches
// doing different things to one key is a conflict.
func mergeMaps(baseV reflect.Value, writers []int, names []string, input, field func(int) reflect.Value) (reflect.Value, error) {
	type op struct {
		by    string
		del   bool
		val   reflect.Value
		enc   []byte
		isSet bool
	}
	ops := map[any]*op{}
	var order []reflect.Value
	encode := func(v reflect.Value) ([]byte, error) { return json.Marshal(v.Interface()) }
	for _, k := range writers {
		bm, inV := field(k), input(k)
		for _, key := range bm.MapKeys() {
			v := bm.MapIndex(key)
			enc, err := encode(v)
			if err != nil {
				return baseV, err
			}
			if bv := inV.MapIndex(key); bv.IsValid() {
				benc, err := encode(bv)
				if err != nil {
					return baseV, err
				}
				if bytes.Equal(enc, benc) {
					continue
				}
			}
			if prev, ok := ops[key.Interface()]; ok {
				if prev.del || !bytes.Equal(prev.enc, enc) {
					return baseV, fmt.Errorf("key %v set differently by %s and %s", key.Interface(), prev.by, names[k])
				}
				continue
			}
			ops[key.Interface()] = &op{by: names[k], val: v, enc: enc, isSet: true}
			order = append(order, key)
		}
		if inV.IsNil() {
			continue
		}
		for _, key := range inV.MapKeys() {
			if bm.MapIndex(key).IsValid() {
				continue
			}
			if prev, ok := ops[key.Interface()]; ok {
				if !prev.del {
					return baseV, fmt.Errorf("key %v deleted by %s and set by %s", key.Interface(), names[k], prev.by)
				}
				continue
			}
			ops[key.Interface()] = &op{by: names[k], del: true}
			order = append(order, key)
		}
	}
	out := reflect.MakeMapWithSize(baseV.Type(), baseV.Len()+len(order))
	if !baseV.IsNil() {
		iter := baseV.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
	}
	for _, key := range order {
		o := ops[key.Interface()]
		if o.del {
			out.SetMapIndex(key, reflect.Value{})
		} else {
			out.SetMapIndex(key, o.val)
		}
	}
	return out, nil
}
