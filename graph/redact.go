package graph

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Filtering what checkpoints record (WithRedact): the changes of a step are
// filtered before they are stored, and the state the run goes on with takes
// the filtered values, so the store and the live run never differ.

// redactChanges returns changes with each value filtered, and whether any
// value changed. A filtered value that is not JSON is dropped (the value is
// stored as it was): the filter must never make a checkpoint unreadable.
func (c *Compiled[S]) redactChanges(changes []change) ([]change, bool) {
	if c.redact == nil {
		return changes, false
	}
	var out []change
	for i, ch := range changes {
		v := c.redact(ch.value)
		if bytes.Equal(v, ch.value) || !json.Valid(v) {
			continue
		}
		if out == nil {
			out = append([]change(nil), changes...)
		}
		out[i].value = v
	}
	if out == nil {
		return changes, false
	}
	return out, true
}

// adopt makes *s take the filtered values of the changes that filtering
// changed (orig are the changes as computed). An appended value replaces
// the elements the step appended, which are the field's last ones.
func (c *Compiled[S]) adopt(s *S, orig, filtered []change) error {
	sv := reflect.ValueOf(s).Elem()
	for i, ch := range filtered {
		if bytes.Equal(ch.value, orig[i].value) {
			continue
		}
		if ch.op != opAppend {
			if err := applyChanges(c.plan, s, filtered[i:i+1]); err != nil {
				return err
			}
			continue
		}
		f := &c.plan.fields[c.plan.byName[ch.field]]
		nv := reflect.New(f.typ)
		if err := json.Unmarshal(ch.value, nv.Interface()); err != nil {
			return err
		}
		fv, added := sv.Field(f.index), nv.Elem()
		// A fresh slice: the old backing array may be shared with a copy.
		nf := reflect.MakeSlice(f.typ, 0, fv.Len())
		nf = reflect.AppendSlice(nf, fv.Slice(0, fv.Len()-added.Len()))
		fv.Set(reflect.AppendSlice(nf, added))
	}
	return nil
}

// redactText filters a status's reason or error (as a JSON string).
func (c *Compiled[S]) redactText(s string) string {
	if c.redact == nil || s == "" {
		return s
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return s
	}
	var out string
	if json.Unmarshal(c.redact(raw), &out) != nil {
		return s
	}
	return out
}
