package graph

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// fieldKind says how a field is compared for change detection.
type fieldKind uint8

const (
	kindOther  fieldKind = iota // compared by its JSON encoding
	kindInt                     // compared as int64
	kindUint                    // compared as uint64
	kindFloat                   // compared as float64
	kindBool                    // compared as bool
	kindString                  // compared as string
)

// reducer says how parallel branches' writes to a field are joined.
type reducer uint8

const (
	reduceReplace reducer = iota // at most one branch may change the field
	reduceAppend                 // slices: base + each branch's new elements, in node order
	reduceMerge                  // maps: union of the keys each branch set or deleted
)

// fieldPlan is one top-level field of the state, resolved once at Compile.
type fieldPlan struct {
	name  string // Go field name: the key in the store
	index int    // struct field index
	typ   reflect.Type
	kind  fieldKind
	red   reducer
}

// statePlan is the compiled view of the state type: the fields checkpoints store.
type statePlan struct {
	typ    reflect.Type
	fields []fieldPlan
	byName map[string]int
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
)

// buildPlan validates the state type and resolves its fields and reducers.
// Every field that checkpoints store must round-trip through encoding/json;
// anything JSON would silently drop or cannot encode is refused by name.
func buildPlan(t reflect.Type) (*statePlan, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("state type %v must be a struct (it is a %v)", t, t.Kind())
	}
	p := &statePlan{typ: t, byName: map[string]int{}}
	var errs []error
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jsonTag := f.Tag.Get("json")
		graphTag, hasGraphTag := f.Tag.Lookup("graph")
		if jsonTag == "-" {
			if hasGraphTag {
				errs = append(errs, fmt.Errorf("field %s: graph tag %q on a field kept out of checkpoints by json:\"-\"", f.Name, graphTag))
			}
			continue
		}
		if !f.IsExported() {
			errs = append(errs, fmt.Errorf("field %s of %v is unexported and would be silently dropped from checkpoints: export it or tag it `json:\"-\"`", f.Name, t))
			continue
		}
		if err := checkJSONType(f.Type, t.Name()+"."+f.Name, map[reflect.Type]bool{}); err != nil {
			errs = append(errs, err)
			continue
		}
		fp := fieldPlan{name: f.Name, index: i, typ: f.Type, kind: scalarKind(f.Type)}
		switch graphTag {
		case "":
		case "append":
			if f.Type.Kind() != reflect.Slice {
				errs = append(errs, fmt.Errorf("field %s: graph:\"append\" needs a slice, not %v", f.Name, f.Type))
				continue
			}
			fp.red = reduceAppend
		case "merge":
			if f.Type.Kind() != reflect.Map {
				errs = append(errs, fmt.Errorf("field %s: graph:\"merge\" needs a map, not %v", f.Name, f.Type))
				continue
			}
			fp.red = reduceMerge
		default:
			errs = append(errs, fmt.Errorf("field %s: unknown graph tag %q (known: append, merge)", f.Name, graphTag))
			continue
		}
		p.byName[f.Name] = len(p.fields)
		p.fields = append(p.fields, fp)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("state type %v: %w", t, errors.Join(errs...))
	}
	return p, nil
}

// scalarKind classifies plain scalar fields, which are compared without encoding.
func scalarKind(t reflect.Type) fieldKind {
	if t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return kindOther
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Bool:
		return kindBool
	case reflect.String:
		return kindString
	}
	return kindOther
}

// checkJSONType walks t and refuses what encoding/json would drop, fail on, or
// not restore exactly: unexported struct fields, funcs, chans, complex numbers,
// interfaces, and maps with unusable keys. Types with their own unmarshaler are
// trusted.
func checkJSONType(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return nil
	case reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return fmt.Errorf("field %s: type %v cannot be stored as JSON; tag it `json:\"-\"` to keep it out of checkpoints", path, t)
	case reflect.Interface:
		return fmt.Errorf("field %s: interface type %v cannot be restored from a checkpoint; use a concrete type, json.RawMessage, or tag it `json:\"-\"`", path, t)
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkJSONType(t.Elem(), path+"[]", seen)
	case reflect.Map:
		k := t.Key()
		switch k.Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !reflect.PointerTo(k).Implements(textUnmarshalerType) {
				return fmt.Errorf("field %s: map key type %v cannot be a JSON object key", path, k)
			}
		}
		return checkJSONType(t.Elem(), path+"[key]", seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Tag.Get("json") == "-" {
				continue
			}
			fpath := path + "." + f.Name
			if !f.IsExported() {
				if f.Anonymous && f.Type.Kind() == reflect.Struct {
					// encoding/json promotes the exported fields of an embedded unexported struct.
					if err := checkJSONType(f.Type, fpath, seen); err != nil {
						return err
					}
					continue
				}
				return fmt.Errorf("field %s is unexported and would be silently dropped from checkpoints: export it or tag it `json:\"-\"`", fpath)
			}
			if err := checkJSONType(f.Type, fpath, seen); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("field %s: unsupported type %v", path, t)
}
