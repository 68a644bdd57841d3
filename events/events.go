// Package events defines the payload of every custom event a lemmings run
// writes (graph.Event's Name and Data): the workflow emits these types, and
// the terminal, `lemmings log`, serve, the MCP server, the cluster view and
// the run's own end sink read them back with Decode. events.jsonl keeps its
// format: each payload's fields are declared in the alphabetical order of
// their JSON names, as the maps it replaces were written
// (TestPayloadFieldsAreInJSONKeyOrder), and golden files of a scripted run
// check the bytes (demo's TestTheEventLogKeepsItsFormat).
package events

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lemmings-dev/lemmings/graph"
)

// Payload is the data of one kind of event.
type Payload interface {
	// Kind is the event's name (graph.Event.Name).
	Kind() string
}

// Emit sends p from inside a node as a custom event named p.Kind()
// (graph.Emit).
func Emit(ctx context.Context, p Payload) { graph.Emit(ctx, p.Kind(), p) }

// Event makes the custom event of p outside a node (a run's own notes).
func Event(runID string, p Payload) graph.Event {
	ev := graph.Event{Kind: graph.EventCustom, Name: p.Kind(), RunID: runID}
	ev.Data, _ = json.Marshal(p)
	return ev
}

// kinds makes an empty payload of each kind Decode knows.
var kinds = map[string]func() Payload{}

func register(ps ...func() Payload) {
	for _, p := range ps {
		kinds[p().Kind()] = p
	}
}

// Kinds lists the names of every kind of payload.
func Kinds() []string {
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	return out
}

// Decode returns the typed payload of a custom event: a pointer to one of
// this package's types, nil with no error for an event that is not custom
// or whose kind has no payload type (a newer lemmings' event in an older
// reader). An error says the data does not fit its kind.
func Decode(ev graph.Event) (Payload, error) {
	if ev.Kind != graph.EventCustom {
		return nil, nil
	}
	mk, ok := kinds[ev.Name]
	if !ok {
		return nil, nil
	}
	p := mk()
	if len(ev.Data) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(ev.Data, p); err != nil {
		return nil, fmt.Errorf("event %s of run %s step %d: %w", ev.Name, ev.RunID, ev.Step, err)
	}
	return p, nil
}

// As decodes a custom event into T when it is T's kind.
func As[T any, P interface {
	*T
	Payload
}](ev graph.Event) (*T, bool) {
	var zero T
	if ev.Kind != graph.EventCustom || ev.Name != P(&zero).Kind() {
		return nil, false
	}
	p, err := Decode(ev)
	if err != nil || p == nil {
		return nil, false
	}
	t, ok := p.(P)
	return (*T)(t), ok
}

// Fields is an event's data as a generic object, for displays that list
// whatever an event carries (key=value lines, the MCP server's event
// lines): nil when there is none or it is not an object.
func Fields(ev graph.Event) map[string]any {
	if len(ev.Data) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(ev.Data, &m) != nil {
		return nil
	}
	return m
}
