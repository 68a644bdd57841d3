package runview

import (
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/runstate"
)

// What the user told a run and took back is said in the log's line, on the
// board and in the report, with the directive's fate.
func TestTheUsersSteeringIsShownWithItsOutcome(t *testing.T) {
	if got := SteerText(&events.Told{Directive: "d3", Message: "use the stdlib\nonly", Priority: "normal"}); got != "told by the user (normal, directive d3): use the stdlib" {
		t.Errorf("told: %q", got)
	}
	if got := SteerText(&events.TaskUndone{Task: "t2", Revert: "0123456789abcdef", Reason: "wrong file"}); got != "task t2 undone by the user (revert 0123456789): wrong file" {
		t.Errorf("undone: %q", got)
	}
	at := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	v := View{Tells: []runstate.ToldMessage{{ID: "1", Message: "use the stdlib", Directive: "d3", Priority: "normal", Delivered: at}},
		Undone:     []runstate.UndoneTask{{TaskID: "t2", Title: "Add X", Reason: "wrong file", Commit: "aaaaaaaaaaaa", Revert: "bbbbbbbbbbbb", By: "undo"}},
		Directives: []Directive{{ID: "d3", Source: "user", Fate: "completed", TaskID: "t4"}}}
	got := v.Steering()
	for _, want := range []string{"d3 (normal, taken in 2026-11-28T03:00:00Z) → completed t4: use the stdlib",
		"t2 Add X (lemmings undo): `aaaaaaaaaa` reverted by `bbbbbbbbbb`; why: wrong file"} {
		if !strings.Contains(got, want) {
			t.Errorf("steering lacks %q:\n%s", want, got)
		}
	}
	if (View{}).Steering() != "" {
		t.Error("a run nobody steered has a Steering section")
	}
}
