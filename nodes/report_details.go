package nodes

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/workspace"
)

// DirectiveRow is one directive and what finally became of it: the log
// records each change of fate (task, then completed), a reader wants one
// line per directive with the way it went.
type DirectiveRow struct {
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

// DirectiveRows folds the directive log and the pending directives into one
// row per directive, in the order they first appear.
func DirectiveRows(log []DirectiveFate, pending []Directive) []DirectiveRow {
	var rows []DirectiveRow
	at := map[string]int{}
	var trails [][]string
	for _, f := range log {
		i, ok := at[f.DirectiveID]
		if !ok {
			i = len(rows)
			at[f.DirectiveID] = i
			rows = append(rows, DirectiveRow{ID: f.DirectiveID, Source: f.Source, Description: f.Description})
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
		row := DirectiveRow{ID: d.ID, Source: d.Source, Description: d.Description, Fate: PendingFate,
			TaskID: d.TaskID, Priority: d.Priority, Type: d.Type}
		if i, ok := at[d.ID]; ok {
			row.Trail = strings.TrimPrefix(rows[i].Trail+" → "+PendingFate, " → ")
			rows[i] = row
			continue
		}
		rows = append(rows, row)
	}
	return rows
}

// FailedAttempt is one implementor attempt that did not pass, and why.
type FailedAttempt struct {
	TaskID  string
	Attempt int
	Reason  string
}

// failedAttempts reads from the run's event log why each failed attempt
// failed: QA's verdict, or the implementor's own ending (a loop, a blocked
// answer). A step run again after a crash logs the same attempt twice: the
// last word counts.
func failedAttempts(path string) []FailedAttempt {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []FailedAttempt
	at := map[string]int{}
	put := func(fa FailedAttempt) {
		key := fmt.Sprintf("%s#%d", fa.TaskID, fa.Attempt)
		if i, ok := at[key]; ok {
			out[i] = fa
			return
		}
		at[key] = len(out)
		out = append(out, fa)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev graph.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Kind != graph.EventCustom {
			continue
		}
		var d struct {
			Task     string `json:"task"`
			Attempt  int    `json:"attempt"`
			Passed   bool   `json:"passed"`
			Feedback string `json:"feedback"`
			Status   string `json:"status"`
		}
		if json.Unmarshal(ev.Data, &d) != nil || d.Task == "" {
			continue
		}
		switch {
		case ev.Name == "qa" && !d.Passed:
			reason := strings.TrimSuffix(firstLine(d.Feedback), workspace.OutputTail)
			if gist := FailureGist(d.Feedback); len(gist) > 0 {
				reason += " " + strings.Join(gist, " / ")
			}
			put(FailedAttempt{TaskID: d.Task, Attempt: d.Attempt, Reason: "QA failed: " + reason})
		case ev.Name == "implementation" && d.Status != "" && d.Status != ImplFinished:
			put(FailedAttempt{TaskID: d.Task, Attempt: d.Attempt, Reason: "the implementor ended with " + d.Status})
		}
	}
	return out
}
