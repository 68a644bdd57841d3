package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// Change operations stored for a field.
const (
	opSet    byte = 1 // value: the field's JSON encoding
	opAppend byte = 2 // value: JSON array of elements appended to the field
)

// change is one field's write in a record.
type change struct {
	field string
	op    byte
	value []byte
}

// tracker knows the state as last committed and computes what a new state
// changed: scalars by comparison, append fields by their new elements, other
// fields by their JSON encoding. Per step it encodes only what changed, plus
// one element per append field to notice a list that was rewritten.
type tracker[S any] struct {
	plan      *statePlan
	base      S               // last committed state (shallow copy)
	enc       [][]byte        // JSON of kindOther fields at base
	appendLen []int           // stored length of append fields
	lastElem  []reflect.Value // copy of the last stored element of append fields
}

func newTracker[S any](plan *statePlan) *tracker[S] {
	n := len(plan.fields)
	return &tracker[S]{plan: plan, enc: make([][]byte, n), appendLen: make([]int, n), lastElem: make([]reflect.Value, n)}
}

// marshalValue encodes a field as JSON; plain integers and booleans skip
// encoding/json, which gives the same bytes.
func marshalValue(v reflect.Value) ([]byte, error) {
	if scalarKind(v.Type()) != kindOther {
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return strconv.AppendInt(nil, v.Int(), 10), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return strconv.AppendUint(nil, v.Uint(), 10), nil
		case reflect.Bool:
			return strconv.AppendBool(nil, v.Bool()), nil
		}
	}
	if v.CanAddr() {
		return json.Marshal(v.Addr().Interface())
	}
	return json.Marshal(v.Interface())
}

// reset makes s the committed state and returns the full encoding of every
// field (a snapshot).
func (t *tracker[S]) reset(s S) ([]change, error) {
	t.base = s
	bv := reflect.ValueOf(&t.base).Elem()
	out := make([]change, 0, len(t.plan.fields))
	for i, f := range t.plan.fields {
		fv := bv.Field(f.index)
		b, err := marshalValue(fv)
		if err != nil {
			return nil, fmt.Errorf("encode state field %s: %w", f.name, err)
		}
		out = append(out, change{field: f.name, op: opSet, value: b})
		t.enc[i] = nil
		if f.kind == kindOther && f.red != reduceAppend {
			t.enc[i] = b
		}
		if f.red == reduceAppend {
			if err := t.noteAppend(i, fv); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (t *tracker[S]) noteAppend(i int, fv reflect.Value) error {
	n := fv.Len()
	t.appendLen[i] = n
	if n > 0 {
		if !t.lastElem[i].IsValid() {
			t.lastElem[i] = reflect.New(fv.Type().Elem()).Elem()
		}
		t.lastElem[i].Set(fv.Index(n - 1))
	}
	return nil
}

// fullOf encodes every field of s, without committing.
func (t *tracker[S]) fullOf(s *S) ([]change, error) {
	sv := reflect.ValueOf(s).Elem()
	out := make([]change, 0, len(t.plan.fields))
	for _, f := range t.plan.fields {
		b, err := marshalValue(sv.Field(f.index))
		if err != nil {
			return nil, fmt.Errorf("encode state field %s: %w", f.name, err)
		}
		out = append(out, change{field: f.name, op: opSet, value: b})
	}
	return out, nil
}

// diff returns the changes from the committed state to s, without committing.
func (t *tracker[S]) diff(s *S) ([]change, error) {
	bv := reflect.ValueOf(&t.base).Elem()
	cv := reflect.ValueOf(s).Elem()
	var out []change
	for i := range t.plan.fields {
		c, changed, err := t.fieldDiff(i, bv, cv)
		if err != nil {
			return nil, err
		}
		if changed {
			out = append(out, c)
		}
	}
	return out, nil
}

func (t *tracker[S]) fieldDiff(i int, bv, cv reflect.Value) (change, bool, error) {
	f := &t.plan.fields[i]
	a, b := bv.Field(f.index), cv.Field(f.index)
	switch f.kind {
	case kindInt:
		if a.Int() == b.Int() {
			return change{}, false, nil
		}
	case kindUint:
		if a.Uint() == b.Uint() {
			return change{}, false, nil
		}
	case kindFloat:
		if x, y := a.Float(), b.Float(); x == y || (x != x && y != y) {
			return change{}, false, nil
		}
	case kindBool:
		if a.Bool() == b.Bool() {
			return change{}, false, nil
		}
	case kindString:
		if a.String() == b.String() {
			return change{}, false, nil
		}
	default:
		if f.red == reduceAppend {
			return t.appendDiff(i, b)
		}
		enc, err := marshalValue(b)
		if err != nil {
			return change{}, false, fmt.Errorf("encode state field %s: %w", f.name, err)
		}
		if bytes.Equal(enc, t.enc[i]) {
			return change{}, false, nil
		}
		return change{field: f.name, op: opSet, value: enc}, true, nil
	}
	enc, err := marshalValue(b)
	if err != nil {
		return change{}, false, fmt.Errorf("encode state field %s: %w", f.name, err)
	}
	return change{field: f.name, op: opSet, value: enc}, true, nil
}

// appendDiff encodes only the elements added since the last commit; a list
// that shrank or whose last stored element changed is stored whole.
func (t *tracker[S]) appendDiff(i int, b reflect.Value) (change, bool, error) {
	f := &t.plan.fields[i]
	L, n := t.appendLen[i], b.Len()
	// The last stored element is compared by value: a cheap guard that
	// notices most lists rebuilt instead of appended to.
	rewritten := n < L || (L > 0 && !reflect.DeepEqual(b.Index(L-1).Interface(), t.lastElem[i].Interface()))
	if rewritten {
		enc, err := marshalValue(b)
		if err != nil {
			return change{}, false, fmt.Errorf("encode state field %s: %w", f.name, err)
		}
		return change{field: f.name, op: opSet, value: enc}, true, nil
	}
	if n == L {
		return change{}, false, nil
	}
	enc, err := marshalValue(b.Slice(L, n))
	if err != nil {
		return change{}, false, fmt.Errorf("encode state field %s: %w", f.name, err)
	}
	return change{field: f.name, op: opAppend, value: enc}, true, nil
}

// commit makes s the committed state, given the changes diff returned for it.
func (t *tracker[S]) commit(s S, changes []change) error {
	t.base = s
	if len(changes) == 0 {
		return nil
	}
	bv := reflect.ValueOf(&t.base).Elem()
	for _, c := range changes {
		i := t.plan.byName[c.field]
		f := &t.plan.fields[i]
		switch {
		case f.red == reduceAppend:
			if err := t.noteAppend(i, bv.Field(f.index)); err != nil {
				return err
			}
		case f.kind == kindOther:
			t.enc[i] = c.value
		}
	}
	return nil
}

// changedNames lists the fields of changes, for events.
func changedNames(changes []change) []string {
	if len(changes) == 0 {
		return nil
	}
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.field
	}
	return out
}

// applyChanges applies stored changes to *s. Unknown fields (removed from the
// type since they were stored) are ignored. Appends write into spare capacity:
// the caller owns *s's slices or has capped them (branchCopy).
func applyChanges[S any](plan *statePlan, s *S, changes []change) error {
	sv := reflect.ValueOf(s).Elem()
	for _, c := range changes {
		i, ok := plan.byName[c.field]
		if !ok {
			continue
		}
		f := &plan.fields[i]
		fv := sv.Field(f.index)
		switch c.op {
		case opSet:
			if ok, err := setScalar(fv, f, c.value); ok || err != nil {
				if err != nil {
					return fmt.Errorf("decode state field %s: %w", f.name, err)
				}
				continue
			}
			nv := reflect.New(f.typ)
			if err := json.Unmarshal(c.value, nv.Interface()); err != nil {
				return fmt.Errorf("decode state field %s: %w", f.name, err)
			}
			fv.Set(nv.Elem())
		case opAppend:
			if f.typ.Kind() != reflect.Slice {
				return fmt.Errorf("decode state field %s: append to a %v", f.name, f.typ)
			}
			nv := reflect.New(f.typ)
			if err := json.Unmarshal(c.value, nv.Interface()); err != nil {
				return fmt.Errorf("decode state field %s: %w", f.name, err)
			}
			fv.Set(reflect.AppendSlice(fv, nv.Elem()))
		default:
			return fmt.Errorf("decode state field %s: unknown operation %d", f.name, c.op)
		}
	}
	return nil
}

// setScalar decodes plain integers and booleans without encoding/json, which
// matters when a resume replays thousands of deltas.
func setScalar(fv reflect.Value, f *fieldPlan, b []byte) (bool, error) {
	switch f.kind {
	case kindInt:
		n, err := strconv.ParseInt(string(b), 10, f.typ.Bits())
		if err != nil {
			return false, nil // let encoding/json say what is wrong
		}
		fv.SetInt(n)
		return true, nil
	case kindUint:
		n, err := strconv.ParseUint(string(b), 10, f.typ.Bits())
		if err != nil {
			return false, nil
		}
		fv.SetUint(n)
		return true, nil
	case kindBool:
		v, err := strconv.ParseBool(string(b))
		if err != nil || (string(b) != "true" && string(b) != "false") {
			return false, nil
		}
		fv.SetBool(v)
		return true, nil
	}
	return false, nil
}
