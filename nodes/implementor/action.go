package implementor

// The Implementor's reply: one action, in the JSON protocol (the code inside
// it) or the text protocol (implTextAction, edit.go). The schema
// sent to the model is generated from these types.

import "github.com/invopop/jsonschema"

type editSpec struct {
	Path    string `json:"path" jsonschema:"maxLength=200"`
	Search  string `json:"search"`
	Replace string `json:"replace"`
}

// Action is a reply of the JSON protocol, the schema the model answers in:
// the code, when it writes any, comes inside the JSON. The fields both
// protocols share are embedded (actionHead, actionTail) in the order the
// schema lists them.
type Action struct {
	actionHead
	Edits   []editSpec `json:"edits,omitempty" jsonschema:"maxItems=10"`
	Blocks  string     `json:"blocks,omitempty"`
	Content string     `json:"content,omitempty"`
	actionTail
}

// actionHead and actionTail are the fields of an action both edit protocols
// have.
type actionHead struct {
	Thought string `json:"thought" jsonschema:"maxLength=400"`
	Action  string `json:"action"` // one of toolNames: see JSONSchemaExtend
	Path    string `json:"path,omitempty" jsonschema:"maxLength=200"`
	// Symbol names the function, method or type an edit or read_file is
	// about (text protocol): the code call shows it and takes it back whole.
	Symbol string `json:"symbol,omitempty" jsonschema:"maxLength=120"`
	// StartLine and EndLine pick read_file's window.
	StartLine int    `json:"start_line,omitempty" jsonschema:"minimum=0"`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"minimum=0"`
	Pattern   string `json:"pattern,omitempty" jsonschema:"maxLength=200"`
	Query     string `json:"query,omitempty" jsonschema:"maxLength=300"`
}

type actionTail struct {
	Gate     string `json:"gate,omitempty" jsonschema:"maxLength=40"`
	Summary  string `json:"summary,omitempty" jsonschema:"maxLength=800"`
	Question string `json:"question,omitempty" jsonschema:"maxLength=600"`
}

// JSONSchemaExtend sets the enum of "action" to the tools the JSON protocol
// offers (llm.SchemaFor calls it).
func (Action) JSONSchemaExtend(s *jsonschema.Schema) { setActionEnum(s, toolNames(false)) }

func setActionEnum(s *jsonschema.Schema, names []string) {
	if p, ok := s.Properties.Get("action"); ok {
		p.Enum = nil
		for _, n := range names {
			p.Enum = append(p.Enum, n)
		}
	}
}
