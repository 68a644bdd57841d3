package implementor

import (
	"context"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
)

// What the Implementor does is shown as it happens: each action, each check
// after an edit, each gate, as events the terminal, `lemmings log` and
// `lemmings serve` show (a run that only says "implementor" for minutes
// looks hung).

// emitAction records one Implementor action and the first line of its result.
func (d *Deps) emitAction(ctx context.Context, t *runstate.Task, n int, act Action, result string) {
	ev := events.Action{Task: t.ID, Attempt: t.Attempt, N: n, Action: act.Action,
		Result: textutil.Clip(textutil.FirstLine(strings.TrimSpace(result)), 160)}
	switch {
	case act.Path != "":
		ev.Path = act.Path
	case act.Pattern != "":
		ev.Pattern = textutil.Clip(act.Pattern, 80)
	case act.Query != "":
		ev.Query = textutil.Clip(act.Query, 80)
	case act.Gate != "":
		ev.Gate = act.Gate
	}
	d.emit(ctx, ev)
}

// emitCheck records the checks run after an edit: passed, or the problems
// the edit introduced.
func (d *Deps) emitCheck(ctx context.Context, t *runstate.Task, paths []string, problems string) {
	d.emit(ctx, events.Check{Task: t.ID, Attempt: t.Attempt, Paths: paths, Passed: problems == "",
		Problem: textutil.Clip(textutil.FirstLine(problems), 200)})
}

// emit sends an event through Deps.Emit, or to the node's sinks.
func (d *Deps) emit(ctx context.Context, p events.Payload) {
	if d.Emit != nil {
		d.Emit(ctx, p)
		return
	}
	events.Emit(ctx, p)
}
