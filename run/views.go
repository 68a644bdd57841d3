package run

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/atomicfile"
	"github.com/lemmings-dev/lemmings/internal/termsafe"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/runview"
	"github.com/lemmings-dev/lemmings/workspace"
)

// The run's views on disk, as package runview renders them: board.md after
// every node, report.md once the Report node has settled the run, or when a
// run stops before it (every run that ends leaves one). Both are hooks
// around the nodes (nodes.Deps.Hooks): the workflow reports facts, the run
// keeps its files.

// views writes one run's board and report.
type views struct {
	deps    *nodes.Deps
	dir     string // the run's folder
	mermaid string // the compiled graph, drawn in the report
	board   string // board.md as last written
}

// hooks are the views' hooks, in the order they run: the report after the
// Report node, then the board (and the progress event) after every node.
func (v *views) hooks() []nodes.Hook {
	return []nodes.Hook{
		{Name: "report", Nodes: []string{runstate.NodeReport}, After: v.afterReport},
		{Name: "board", After: v.afterNode},
	}
}

// afterReport writes report.md for the run the Report node settled.
func (v *views) afterReport(ctx context.Context, _ string, s *runstate.State) error {
	view := runview.Live(s)
	path, err := v.writeReport(ctx, view)
	if err != nil {
		return err
	}
	s.ReportPath = path
	st := view.Standing
	events.Emit(ctx, events.Report{Path: path, Outcome: s.Outcome,
		Status: st.Status, Reason: st.Reason, Next: st.Next, Resumable: st.Resumable})
	return nil
}

// afterNode keeps board.md in step with the state and reports progress.
// The board is a view: failing to write it is reported, never fatal. Only
// a changed board is written: most steps leave it as it was.
func (v *views) afterNode(ctx context.Context, _ string, s *runstate.State) error {
	view := runview.Live(s)
	if board := view.BoardMD(); board != v.board {
		if err := atomicfile.WriteFile(filepath.Join(v.dir, BoardFile), []byte(llm.Redact(termsafe.String(board))), 0o600); err != nil {
			events.Emit(ctx, events.Warning{Message: "board.md not written: " + err.Error()})
		} else {
			v.board = board
		}
	}
	events.Emit(ctx, view.Progress().Event())
	return nil
}

// endReport writes report.md for a run that stopped before its Report node
// (failed, stopped, interrupted or paused): its status, the reason and how
// to go on, with everything done so far.
func (v *views) endReport(ctx context.Context, s runstate.State, st runstate.Standing) (string, error) {
	return v.writeReport(ctx, runview.Of(&s, st))
}

func (v *views) writeReport(ctx context.Context, view runview.View) (string, error) {
	f := runview.Facts{Sandbox: v.sandboxLine(), KnowledgeDir: v.deps.Settings.KnowledgeDir,
		Events: filepath.Join(v.dir, EventsFile), Mermaid: v.mermaid, Finished: time.Now()}
	if w := v.deps.Work; w != nil && view.BaseCommit != "" {
		if log, err := w.Log(ctx, view.BaseCommit); err == nil {
			f.Commits = append([]workspace.Commit{}, log...)
		}
	}
	path := filepath.Join(v.dir, ReportFile)
	if err := atomicfile.WriteFile(path, []byte(llm.Redact(termsafe.String(view.ReportMD(f)))), 0o600); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}

// sandboxLine says how model-written code was confined, and which gates
// had the network.
func (v *views) sandboxLine() string {
	line := "the default sandbox (lemmings doctor says what this machine offers)"
	if v.deps.Sandbox != nil {
		line = v.deps.Sandbox.Describe()
	}
	var net []string
	for _, g := range v.deps.Gates {
		if g.Network {
			net = append(net, g.Name)
		}
	}
	if len(net) > 0 {
		line += "; network for gates " + strings.Join(net, ", ") + " (gates[].network)"
	}
	return line
}
