package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/atomicfile"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/runview"
	"github.com/lemmings-dev/lemmings/workspace"
)

// An undo of a run that is not running, and a fork made without running it, change how the
// run stands without a process of the run: they write what a run's end writes, so status,
// report, log, runs, serve and MCP all say the same word (undo: stopped; fork: forked) and the
// step. The event log gets what was done and a run_end that names the command; report.md is
// written again from the run's new state.

// recordStanding appends what (the undo or the fork) and the run's standing after it to the
// run's event log, and writes its report again. by is "undo" or "fork"; wt the run's worktree
// (its commits go in the report); sandbox the line the report gives the sandbox.
func recordStanding(ctx context.Context, root, runID, by string, what events.Payload, wt *workspace.Worktree, sandbox string, red *redact.Redactor) (runstate.Standing, error) {
	store, err := Store(root)
	if err != nil {
		return runstate.Standing{}, err
	}
	snap, err := store.State(ctx, runID)
	if err != nil {
		return runstate.Standing{}, err
	}
	st := standingOf(snap, nil)
	dir := filepath.Join(root, DataDir, RunsDir, runID)
	now := time.Now().UTC()
	ev := events.Event(runID, what)
	ev.Time, ev.Step = now, snap.Step
	data, _ := json.Marshal(events.RunEnd{Next: st.Next, Resumable: st.Resumable, Stored: snap.Status, By: by})
	if err := appendEvents(dir, red, ev, graph.Event{Kind: graph.EventRunEnd, RunID: runID, Step: snap.Step, Time: now,
		Status: graph.Status(st.Status), Reason: st.Reason, Data: data}); err != nil {
		return st, err
	}

	s := snap.State
	if s.RunID == "" {
		s.RunID = runID
	}
	f := runview.Facts{Sandbox: sandbox, Events: filepath.Join(dir, EventsFile), Finished: now, Step: snap.Step}
	if wt != nil && s.BaseCommit != "" {
		if log, err := wt.Log(ctx, s.BaseCommit); err == nil {
			f.Commits = append([]workspace.Commit{}, log...)
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ReportFile), []byte(llm.Redact(runview.Of(&s, st).ReportMD(f))), 0o600); err != nil {
		return st, fmt.Errorf("report: %w", err)
	}
	return st, nil
}

// sandboxLineOf is the sandbox line of a run's last report ("" when it has none): a fork or an
// undo runs no model-written code, so the run's own line stays true.
func sandboxLineOf(root, runID string) string {
	data, err := os.ReadFile(filepath.Join(root, DataDir, RunsDir, runID, ReportFile))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "- **Sandbox:** "); ok {
			return rest
		}
	}
	return ""
}

// noteEvent appends one event to a run's log, outside any process of the run.
func noteEvent(root, runID string, what events.Payload, red *redact.Redactor) error {
	ev := events.Event(runID, what)
	ev.Time = time.Now().UTC()
	return appendEvents(filepath.Join(root, DataDir, RunsDir, runID), red, ev)
}

// appendEvents appends events to the event log in a run's folder dir, secrets redacted.
func appendEvents(dir string, red *redact.Redactor, evs ...graph.Event) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	file, err := graph.OpenJSONLSink(filepath.Join(dir, EventsFile))
	if err != nil {
		return err
	}
	sink := redactingSink{next: file, red: red}
	for _, ev := range evs {
		sink.Handle(ev)
	}
	return errors.Join(file.Err(), file.Close())
}
