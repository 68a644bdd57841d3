package mcpserver

// Time travel and steering (docs/time-travel.md): tell, undo, history, fork.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

// TellInput is a message for a run, as lemmings tell.
type TellInput struct {
	RunID    string `json:"run_id,omitempty" jsonschema:"the run; empty: the run that is running"`
	Message  string `json:"message" jsonschema:"what the run should do or take into account, in plain words (at most 4000 bytes)"`
	Priority string `json:"priority,omitempty" jsonschema:"critical (interrupts the plan), normal (default) or low"`
}

// TellOutput says the message waits for the run's next checkpoint.
type TellOutput struct {
	RunID   string `json:"run_id"`
	ID      string `json:"id" jsonschema:"the message's id"`
	Queued  bool   `json:"queued"`
	Message string `json:"message"`
}

// UndoInput takes a finished task back, as lemmings undo.
type UndoInput struct {
	RunID  string `json:"run_id,omitempty" jsonschema:"the run; empty: the most recently updated run"`
	Task   string `json:"task" jsonschema:"the finished task to take back, as the run names it (t2)"`
	Reason string `json:"reason,omitempty" jsonschema:"why: the planner and the Implementor get it with the task"`
}

// UndoOutput says what an undo did.
type UndoOutput struct {
	RunID     string `json:"run_id"`
	Task      string `json:"task"`
	Requested bool   `json:"requested" jsonschema:"true: the run is running and takes the task back at its next task boundary"`
	Commit    string `json:"commit,omitempty" jsonschema:"the task's commit"`
	Revert    string `json:"revert,omitempty" jsonschema:"the commit that reverted it"`
	Message   string `json:"message"`
}

// ForkInput starts a new run from a step of a run, as lemmings fork.
type ForkInput struct {
	RunID         string `json:"run_id" jsonschema:"the run to fork"`
	Step          int    `json:"step" jsonschema:"the step to fork from (history lists them)"`
	RejectTask    string `json:"reject_task,omitempty" jsonschema:"a task to take back first (t2): its commit reverted, the task back in the plan with reason"`
	Reason        string `json:"reason,omitempty" jsonschema:"why the task is rejected (required with reject_task)"`
	Remit         string `json:"remit,omitempty" jsonschema:"a new remit, replacing the run's"`
	Offline       bool   `json:"offline,omitempty" jsonschema:"true: the fork runs offline"`
	NoSupervisors bool   `json:"no_supervisors,omitempty" jsonschema:"true: the fork runs without the cloud supervisors"`
}

func (s *Server) addTimeTravelTools() {
	tellSchema := inputSchema[TellInput]()
	tellSchema.Properties["message"].MinLength = ptr(1)
	tellSchema.Properties["priority"].Enum = []any{runstate.PrioCritical, runstate.PrioNormal, runstate.PrioLow}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "tell", Title: "Tell a run something", Description: describe("tell"), InputSchema: tellSchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false)}}, s.tellTool)
	undoSchema := inputSchema[UndoInput]()
	undoSchema.Properties["task"].MinLength = ptr(1)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "undo", Title: "Take a finished task back", Description: describe("undo"), InputSchema: undoSchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false)}}, s.undoTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "history", Title: "The steps a run can be forked from", Description: describe("history"),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.historyTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "fork", Title: "Fork a run from a step", Description: describe("fork"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}, s.forkTool)
}

// config is the repository's configuration, for the secrets it names.
func (s *Server) config() *config.Config {
	if s.opts.LoadConfig == nil {
		return nil
	}
	cfg, err := s.opts.LoadConfig()
	if err != nil {
		return nil
	}
	return cfg
}

func (s *Server) tellTool(ctx context.Context, _ *mcp.CallToolRequest, in TellInput) (*mcp.CallToolResult, TellOutput, error) {
	id := in.RunID
	if id == "" {
		_, picked, err := s.pick(ctx, "", func(r graph.RunInfo) bool { return r.Active })
		if err != nil {
			return nil, TellOutput{}, fmt.Errorf("no run is running in %s: name the run (runs lists them)", s.opts.Root)
		}
		id = picked
	} else if _, picked, err := s.pick(ctx, id, nil); err != nil {
		return nil, TellOutput{}, err
	} else {
		id = picked
	}
	req, err := run.Tell(ctx, s.opts.Root, id, in.Message, in.Priority, s.config(), nil)
	if err != nil {
		return nil, TellOutput{}, err
	}
	s.logf("run %s: told %s", id, req.ID)
	return nil, TellOutput{RunID: id, ID: req.ID, Queued: true,
		Message: "the run files it as the user's directive at its next checkpoint (a stopped or paused run: when resumed); status and the report show what the planner made of it"}, nil
}

func (s *Server) undoTool(ctx context.Context, _ *mcp.CallToolRequest, in UndoInput) (*mcp.CallToolResult, UndoOutput, error) {
	task := strings.TrimSpace(in.Task)
	if task == "" {
		return nil, UndoOutput{}, errors.New("name the task to take back (t2)")
	}
	_, id, err := s.pick(ctx, in.RunID, nil)
	if err != nil {
		return nil, UndoOutput{}, err
	}
	res, err := run.Undo(ctx, s.opts.Root, id, task, in.Reason, s.config(), nil)
	if err != nil {
		return nil, UndoOutput{}, err
	}
	out := UndoOutput{RunID: id, Task: task, Requested: res.Requested}
	if res.Requested {
		out.Message = "the run is running: it takes the task back at its next task boundary"
	} else {
		out.Commit, out.Revert = res.Undone.Commit, res.Undone.Revert
		out.Message = "the task is back in the plan and the run is stopped: resume does it again"
	}
	s.logf("run %s: undo %s", id, task)
	return nil, out, nil
}

func (s *Server) historyTool(ctx context.Context, _ *mcp.CallToolRequest, in RunIDInput) (*mcp.CallToolResult, run.RunHistory, error) {
	_, id, err := s.pick(ctx, in.RunID, nil)
	if err != nil {
		return nil, run.RunHistory{}, err
	}
	h, err := run.History(ctx, s.opts.Root, id)
	return nil, h, err
}

func (s *Server) forkTool(ctx context.Context, _ *mcp.CallToolRequest, in ForkInput) (*mcp.CallToolResult, RunStatus, error) {
	if strings.TrimSpace(in.RunID) == "" {
		return nil, RunStatus{}, errors.New("name the run to fork (runs lists them) and the step (history lists them)")
	}
	if in.RejectTask != "" && strings.TrimSpace(in.Reason) == "" {
		return nil, RunStatus{}, fmt.Errorf("reject_task %s needs a reason", in.RejectTask)
	}
	_, parent, err := s.pick(ctx, in.RunID, nil)
	if err != nil {
		return nil, RunStatus{}, err
	}
	id := run.NewRunID()
	args := []string{"fork", parent + "@" + strconv.Itoa(in.Step), "--run-id", id}
	if in.RejectTask != "" {
		args = append(args, "--reject-task", in.RejectTask, "--reason", in.Reason)
	}
	args = append(args, modelFlags("", in.Offline, in.NoSupervisors)...)
	var stdin string
	if remit := strings.TrimSpace(in.Remit); remit != "" {
		args = append(args, "--remit-file", "-") // not in the command line, which /proc shows
		stdin = remit
	}
	return s.launch(ctx, id, "fork", args, stdin, time.Time{})
}
