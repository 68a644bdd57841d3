package runview

import (
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/runstate"
)

// Directive is one directive and what finally became of it: the log
// records each change of fate (task, then completed), a reader wants one
// line per directive with the way it went.
type Directive struct {
	ID          string `json:"directive_id"`
	Source      string `json:"source"`
	Description string `json:"description"`
	Fate        string `json:"fate"`
	// Trail is every fate in order ("task → completed") when there were several.
	Trail  string `json:"trail,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Note   string `json:"note,omitempty"`
	// Priority and Type are known for a directive still pending.
	Priority string `json:"priority,omitempty"`
	Type     string `json:"type,omitempty"`
}

// PendingFate is the fate shown for a directive not yet settled.
const PendingFate = "pending"

// directiveRows folds the directive log and the pending directives into one
// row per directive, in the order they first appear.
func directiveRows(log []runstate.DirectiveFate, pending []runstate.Directive) []Directive {
	var rows []Directive
	at := map[string]int{}
	var trails [][]string
	for _, f := range log {
		i, ok := at[f.DirectiveID]
		if !ok {
			i = len(rows)
			at[f.DirectiveID] = i
			rows = append(rows, Directive{ID: f.DirectiveID, Source: f.Source, Description: f.Description})
			trails = append(trails, nil)
		}
		r := &rows[i]
		r.Fate = f.Fate
		if f.TaskID != "" {
			r.TaskID = f.TaskID
		}
		if f.Note != "" {
			r.Note = f.Note
		}
		trails[i] = append(trails[i], f.Fate)
	}
	for i := range rows {
		if len(trails[i]) > 1 {
			rows[i].Trail = strings.Join(trails[i], " → ")
		}
	}
	for _, d := range pending {
		row := Directive{ID: d.ID, Source: d.Source, Description: d.Description, Fate: PendingFate,
			TaskID: d.TaskID, Priority: d.Priority, Type: d.Type}
		if i, ok := at[d.ID]; ok {
			row.Trail = strings.Join(append(slices.Clone(trails[i]), PendingFate), " → ")
			rows[i] = row
			continue
		}
		rows = append(rows, row)
	}
	return rows
}
