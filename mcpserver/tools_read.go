package mcpserver

import (
	"context"
	"errors"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/run"
)

// RunIDInput names a run; empty means the most recent one.
type RunIDInput struct {
	RunID string `json:"run_id,omitempty" jsonschema:"the run, as run answered; empty: the most recently updated run"`
}

// RunSummary is one line of the runs list.
type RunSummary struct {
	RunID          string  `json:"run_id"`
	Status         string  `json:"status"`
	Updated        string  `json:"updated"`
	Remit          string  `json:"remit"`
	TasksCompleted int     `json:"tasks_completed"`
	TasksFailed    int     `json:"tasks_failed"`
	CostUSD        float64 `json:"cost_usd"`
	Error          string  `json:"error,omitempty" jsonschema:"why a damaged run cannot be read"`
}

// RunsOutput lists the runs of the repository.
type RunsOutput struct {
	Runs []RunSummary `json:"runs" jsonschema:"most recently updated first"`
}

// EventsInput asks for a run's latest events.
type EventsInput struct {
	RunID string `json:"run_id,omitempty" jsonschema:"the run; empty: the most recently updated run"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many of the latest events to return (default 20, at most 200)"`
	After int64  `json:"after,omitempty" jsonschema:"the next of an earlier answer: only events written since"`
	All   bool   `json:"all,omitempty" jsonschema:"every event (checkpoints, model calls, node ends); default: the ones lemmings prints on a terminal"`
}

// EventsOutput is a stretch of a run's event log.
type EventsOutput struct {
	RunID  string      `json:"run_id"`
	Events []EventLine `json:"events" jsonschema:"oldest first"`
	Next   int64       `json:"next" jsonschema:"pass as after to get only the events written since this answer"`
}

// EventLine is one event of a run.
type EventLine struct {
	Time string `json:"time"`
	Kind string `json:"kind" jsonschema:"node_start, node_end, interrupt, error, run_start, run_end…, or for the workflow's own events their name (task_planned, gate, qa, commit, task_failed, warning, report…)"`
	Node string `json:"node,omitempty"`
	Step int    `json:"step"`
	Text string `json:"text" jsonschema:"the event in one line"`
	Data any    `json:"data,omitempty"`
}

// ReportOutput is a run's report.
type ReportOutput struct {
	RunID    string `json:"run_id"`
	Path     string `json:"path"`
	Markdown string `json:"markdown"`
}

func (s *Server) addReadTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "runs", Title: "List runs", Description: describe("runs"), Annotations: readOnly}, s.runsTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "status", Title: "Run status", Description: describe("status"), Annotations: readOnly}, s.statusTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "events", Title: "Run events", Description: describe("events"), Annotations: readOnly}, s.eventsTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "report", Title: "Run report", Description: describe("report"), Annotations: readOnly}, s.reportTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "wait", Title: "Wait for a run", Description: describe("wait"), Annotations: readOnly}, s.waitTool)
}

func (s *Server) runsTool(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, RunsOutput, error) {
	out := RunsOutput{Runs: []RunSummary{}}
	store, err := inspect.Open(s.opts.Root)
	if errors.Is(err, run.ErrNoRuns) {
		return nil, out, nil // none yet, as lemmings runs says
	}
	if err != nil {
		return nil, out, err
	}
	runs, err := store.List(ctx)
	if err != nil {
		return nil, out, err
	}
	for _, r := range runs {
		v := r.View()
		row := RunSummary{RunID: r.ID, Status: r.DisplayStatus(), Updated: stamp(r.Updated), Remit: v.Remit,
			TasksCompleted: v.Tasks.Completed, TasksFailed: v.Tasks.Failed, CostUSD: v.Total.CostUSD}
		if r.Err != nil {
			row.Error = r.Err.Error()
		}
		out.Runs = append(out.Runs, row)
	}
	return nil, out, nil
}

func (s *Server) statusTool(ctx context.Context, _ *mcp.CallToolRequest, in RunIDInput) (*mcp.CallToolResult, RunStatus, error) {
	store, id, err := s.pick(ctx, in.RunID, nil)
	if err != nil {
		return nil, RunStatus{}, err
	}
	st, err := s.status(ctx, store, id)
	return nil, st, err
}

// eventWindow bounds how much of a long event log is read for its latest events.
const eventWindow = 4 << 20

func (s *Server) eventsTool(ctx context.Context, _ *mcp.CallToolRequest, in EventsInput) (*mcp.CallToolResult, EventsOutput, error) {
	_, id, err := s.pick(ctx, in.RunID, nil)
	if err != nil {
		return nil, EventsOutput{}, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 200)
	out := EventsOutput{RunID: id, Events: []EventLine{}, Next: in.After}
	if err := run.CheckRunFiles(s.opts.Root, id); err != nil {
		return nil, out, err
	}
	path := inspect.EventsPath(s.opts.Root, id)
	st, err := os.Stat(path)
	if os.IsNotExist(err) && s.childOf(id) != nil {
		return nil, out, nil // starting: nothing logged yet
	}
	if err != nil {
		return nil, out, err
	}
	from := in.After
	if from == 0 && st.Size() > eventWindow {
		from = st.Size() - eventWindow // the first, cut line is skipped as damaged
	}
	got, err := inspect.ReadEvents(path, from, 0)
	if err != nil {
		return nil, out, err
	}
	out.Next = got.Next
	f := &eventFormat{}
	for _, ev := range got.Events {
		text, notable := f.line(ev) // every event counts, for the progress it carries
		if !notable && !in.All {
			continue
		}
		line := EventLine{Time: stamp(ev.Time), Kind: ev.Kind, Node: ev.Node, Step: ev.Step, Text: text}
		if ev.Name != "" {
			line.Kind = ev.Name
		}
		if data := events.Fields(ev); data != nil {
			line.Data = data
		}
		out.Events = append(out.Events, line)
		if len(out.Events) > limit {
			out.Events = out.Events[1:]
		}
	}
	return nil, out, nil
}

func (s *Server) reportTool(ctx context.Context, _ *mcp.CallToolRequest, in RunIDInput) (*mcp.CallToolResult, ReportOutput, error) {
	_, id, err := s.pick(ctx, in.RunID, nil)
	if err != nil {
		return nil, ReportOutput{}, err
	}
	data, err := inspect.ReadReport(s.opts.Root, id)
	if err != nil {
		return nil, ReportOutput{}, err
	}
	out := ReportOutput{RunID: id, Path: inspect.ReportPath(s.opts.Root, id), Markdown: string(data)}
	// The Markdown itself is what a model reads best.
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Markdown}}}, out, nil
}
