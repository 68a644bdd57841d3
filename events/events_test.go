package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
)

// A map is written with its keys sorted; a struct in its fields' order. So
// that a payload is written as the map it replaced was, its fields go in
// the order of their JSON names.
func TestPayloadFieldsAreInJSONKeyOrder(t *testing.T) {
	types := []reflect.Type{reflect.TypeFor[RunEnd]()}
	for _, mk := range kinds {
		types = append(types, reflect.TypeOf(mk()).Elem())
	}
	for _, typ := range types {
		var names []string
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				t.Errorf("%s.%s has no JSON name", typ.Name(), typ.Field(i).Name)
			}
			names = append(names, name)
		}
		if !sort.StringsAreSorted(names) {
			t.Errorf("%s's fields are not in the order of their JSON names: %v", typ.Name(), names)
		}
	}
}

func TestEveryKindDecodesToItsOwnType(t *testing.T) {
	for name := range kinds {
		p, err := Decode(graph.Event{Kind: graph.EventCustom, Name: name, Data: []byte(`{}`)})
		if err != nil || p == nil || p.Kind() != name {
			t.Errorf("%s: decoded %T (kind %v), %v", name, p, p, err)
		}
	}
	if p, err := Decode(graph.Event{Kind: graph.EventCustom, Name: "from_a_newer_lemmings", Data: []byte(`{"x":1}`)}); p != nil || err != nil {
		t.Errorf("an unknown kind: %v %v", p, err)
	}
	if _, err := Decode(graph.Event{Kind: graph.EventCustom, Name: KindGate, Data: []byte(`{"passed":"yes"}`)}); err == nil {
		t.Error("data that does not fit its kind was accepted")
	}
	if g, ok := As[Gate](graph.Event{Kind: graph.EventCustom, Name: KindGate, Data: []byte(`{"gate":"test","passed":true}`)}); !ok || g.Gate != "test" || !g.Passed {
		t.Errorf("As[Gate]: %+v %v", g, ok)
	}
	if _, ok := As[Gate](graph.Event{Kind: graph.EventCustom, Name: KindQA, Data: []byte(`{}`)}); ok {
		t.Error("As[Gate] took a qa event")
	}
}

// Every event of the golden event logs (written by the workflow as it
// runs) decodes into its type and encodes back to the same bytes.
func TestTheGoldenEventsRoundTripByteForByte(t *testing.T) {
	files, _ := filepath.Glob("../demo/testdata/golden/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no golden event logs in demo/testdata/golden")
	}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for n := 1; sc.Scan(); n++ {
			var line struct { // the golden logs' times are normalized
				Kind, Name string
				Data       json.RawMessage
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			ev := graph.Event{Kind: line.Kind, Name: line.Name, Data: line.Data}
			var p any
			switch {
			case ev.Kind == graph.EventRunEnd && len(ev.Data) > 0:
				p = &RunEnd{}
				if err := json.Unmarshal(ev.Data, p); err != nil {
					t.Fatalf("%s:%d: %v", f, n, err)
				}
			case ev.Kind == graph.EventCustom:
				d, err := Decode(ev)
				if err != nil || d == nil {
					t.Errorf("%s:%d: %s has no payload type (%v)", f, n, ev.Name, err)
					continue
				}
				seen[ev.Name] = true
				p = d
			default:
				continue
			}
			back, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, ev.Data) {
				t.Errorf("%s:%d: %s written back differs:\n got: %s\nwant: %s", f, n, ev.Name, back, ev.Data)
			}
		}
	}
	t.Logf("%d kinds seen in the golden logs", len(seen))
}
