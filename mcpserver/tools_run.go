package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/atomicfile"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// RunInput starts a run, as lemmings run does.
type RunInput struct {
	Remit         string `json:"remit,omitempty" jsonschema:"what to do to the repository, in plain words: a sentence to a few paragraphs (required unless plan or plan_file is given)"`
	Plan          string `json:"plan,omitempty" jsonschema:"an operator plan as YAML text (milestones with tasks and acceptance criteria; lemmings run --plan-example shows the format): the planning model is skipped"`
	PlanFile      string `json:"plan_file,omitempty" jsonschema:"a plan YAML file instead of plan, relative to the repository root"`
	Approve       string `json:"approve,omitempty" jsonschema:"pause for a human decision: milestones (once, after planning) or tasks (before each task); omit for no pauses"`
	Mode          string `json:"mode,omitempty" jsonschema:"quick: the remit is one task, straight to the Implementor, no planning; full: plan milestones and tasks whatever the remit looks like; omit for pipeline.mode as configured (auto: a remit that is one task goes straight to the Implementor)"`
	Model         string `json:"model,omitempty" jsonschema:"Ollama model for the primary role, e.g. qwen2.5-coder:14b (default: as configured)"`
	Offline       bool   `json:"offline,omitempty" jsonschema:"true: no request leaves for anything but the local Ollama (cloud supervisors off, offline retrieval)"`
	NoSupervisors bool   `json:"no_supervisors,omitempty" jsonschema:"true: run the local loop without the cloud supervisors"`
}

// ResumeInput continues a stopped run, as lemmings resume does.
type ResumeInput struct {
	RunID         string `json:"run_id,omitempty" jsonschema:"the run; empty: the most recent run that is not done"`
	ApproveMode   string `json:"approve_mode,omitempty" jsonschema:"change the run's approval pauses: milestones, tasks or none (default: as the run was started)"`
	Model         string `json:"model,omitempty" jsonschema:"Ollama model for the primary role from now on (default: the run's own)"`
	Offline       bool   `json:"offline,omitempty" jsonschema:"true: go on offline from now on"`
	NoSupervisors bool   `json:"no_supervisors,omitempty" jsonschema:"true: go on without the cloud supervisors"`
}

// ApproveInput approves what a paused run waits for.
type ApproveInput struct {
	RunID string `json:"run_id,omitempty" jsonschema:"the paused run; empty: the most recent run that is not done"`
}

// RejectInput rejects what a paused run waits for, saying why.
type RejectInput struct {
	RunID  string `json:"run_id,omitempty" jsonschema:"the paused run; empty: the most recent run that is not done"`
	Reason string `json:"reason" jsonschema:"why: the planner reads it and plans again (required)"`
}

// HaltOutput says a halt was requested.
type HaltOutput struct {
	RunID     string `json:"run_id"`
	Requested bool   `json:"requested"`
	Message   string `json:"message"`
}

func (s *Server) addRunTools() {
	runSchema := inputSchema[RunInput]()
	runSchema.Properties["approve"].Enum = []any{"milestones", "tasks"}
	runSchema.Properties["mode"].Enum = []any{"quick", "full"}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "run", Title: "Start a lemmings run", Description: describe("run"), InputSchema: runSchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}, s.runTool)
	resumeSchema := inputSchema[ResumeInput]()
	resumeSchema.Properties["approve_mode"].Enum = []any{"milestones", "tasks", "none"}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "resume", Title: "Resume a run", Description: describe("resume"), InputSchema: resumeSchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}, s.resumeTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "approve", Title: "Approve a paused run", Description: describe("approve"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}, s.approveTool)
	rejectSchema := inputSchema[RejectInput]()
	rejectSchema.Properties["reason"].MinLength = ptr(1)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "reject", Title: "Reject what a paused run waits for", Description: describe("reject"), InputSchema: rejectSchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}, s.rejectTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "halt", Title: "Halt a run", Description: describe("halt"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true}}, s.haltTool)
}

func (s *Server) runTool(ctx context.Context, _ *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, RunStatus, error) {
	if in.Plan != "" && in.PlanFile != "" {
		return nil, RunStatus{}, errors.New("give plan (YAML text) or plan_file (a path), not both")
	}
	id := run.NewRunID()
	args := []string{"run", "--run-id", id}
	plan := []byte(in.Plan)
	if in.PlanFile != "" {
		data, err := s.readPlanFile(in.PlanFile)
		if err != nil {
			return nil, RunStatus{}, err
		}
		plan = data
	}
	if len(plan) > 0 {
		// Checked here, quoting nothing of it (the CLI's own error shows the
		// lines around a mistake), then kept beside the run's log for the CLI.
		name := in.PlanFile
		if name == "" {
			name = "(plan)"
		}
		if _, err := nodes.ParsePlan(plan, name, false); err != nil {
			return nil, RunStatus{}, err
		}
		path := filepath.Join(s.opts.Root, run.DataDir, MCPDir, id+".plan.yaml")
		if err := privateDir(filepath.Dir(path)); err != nil {
			return nil, RunStatus{}, err
		}
		if err := atomicfile.WriteFile(path, plan, 0o600); err != nil {
			return nil, RunStatus{}, err
		}
		args = append(args, "--plan", path)
	}
	if in.Approve != "" {
		args = append(args, "--approve", in.Approve)
	}
	if in.Mode != "" {
		args = append(args, "--"+in.Mode) // quick or full, the schema's enum

	}
	args = append(args, modelFlags(in.Model, in.Offline, in.NoSupervisors)...)
	var stdin string
	if remit := strings.TrimSpace(in.Remit); remit != "" {
		// On standard input, not in the command line, which every user of
		// the machine can read in /proc.
		args = append(args, "--remit-file", "-")
		stdin = remit
	}
	return s.launch(ctx, id, "run", args, stdin, time.Time{})
}

// readPlanFile reads a plan the client named: a file of the repository,
// through no link that leads out of it, at most maxPlanBytes.
func (s *Server) readPlanFile(name string) ([]byte, error) {
	if filepath.IsAbs(name) {
		return nil, fmt.Errorf("plan_file %s: give a path relative to the repository root (%s); a plan outside the repository can be passed as plan text", name, s.opts.Root)
	}
	root, err := os.OpenRoot(s.opts.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, _, err := safefile.OpenIn(root, filepath.Clean(name))
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path given, not where a link led
		}
		return nil, fmt.Errorf("plan_file %s: %v (a file of the repository %s, through no link that leads out of it)", name, err, s.opts.Root)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPlanBytes+1))
	if err != nil {
		return nil, fmt.Errorf("plan_file %s: %v", name, err)
	}
	if len(data) > maxPlanBytes {
		return nil, fmt.Errorf("plan_file %s: over %d bytes: not a plan", name, maxPlanBytes)
	}
	return data, nil
}

// maxPlanBytes bounds a plan read for a client.
const maxPlanBytes = 1 << 20

func (s *Server) resumeTool(ctx context.Context, _ *mcp.CallToolRequest, in ResumeInput) (*mcp.CallToolResult, RunStatus, error) {
	id, err := s.resumable(ctx, in.RunID)
	if err != nil {
		return nil, RunStatus{}, err
	}
	snap, err := s.snapshot(ctx, id)
	if err != nil {
		return nil, RunStatus{}, err
	}
	if store, err := inspect.Open(s.opts.Root); err == nil && store.Active(ctx, id) {
		return nil, RunStatus{}, fmt.Errorf("run %s is being run by another lemmings process (lemmings halt %s stops it)", id, id)
	}
	if snap.Status == graph.StatusPaused {
		// A bare resume walks through no approval (lemmings resume exits 3).
		pe := &run.PausedError{RunID: id, Reason: snap.Reason}
		return nil, RunStatus{}, fmt.Errorf("%v: call approve, or reject with a reason", pe)
	}
	args := []string{"resume", id}
	if in.ApproveMode != "" {
		args = append(args, "--approve-mode", in.ApproveMode)
	}
	args = append(args, modelFlags(in.Model, in.Offline, in.NoSupervisors)...)
	return s.launch(ctx, id, "resume", args, "", snap.Updated)
}

func (s *Server) approveTool(ctx context.Context, _ *mcp.CallToolRequest, in ApproveInput) (*mcp.CallToolResult, RunStatus, error) {
	return s.decide(ctx, in.RunID, "--approve")
}

func (s *Server) rejectTool(ctx context.Context, _ *mcp.CallToolRequest, in RejectInput) (*mcp.CallToolResult, RunStatus, error) {
	if strings.TrimSpace(in.Reason) == "" {
		return nil, RunStatus{}, errors.New(`--reject needs a reason: lemmings resume --reject "why"`)
	}
	return s.decide(ctx, in.RunID, "--reject", in.Reason)
}

// decide resumes a paused run with a decision, as lemmings resume --approve
// or --reject "why".
func (s *Server) decide(ctx context.Context, runID string, decision ...string) (*mcp.CallToolResult, RunStatus, error) {
	id, err := s.resumable(ctx, runID)
	if err != nil {
		return nil, RunStatus{}, err
	}
	snap, err := s.snapshot(ctx, id)
	if err != nil {
		return nil, RunStatus{}, err
	}
	// Refused here, as the resume would refuse it: no process is started.
	if _, err := inspect.PausedFor(snap); err != nil {
		return nil, RunStatus{}, err
	}
	return s.launch(ctx, id, "resume", append([]string{"resume", id}, decision...), "", snap.Updated)
}

func (s *Server) haltTool(ctx context.Context, _ *mcp.CallToolRequest, in RunIDInput) (*mcp.CallToolResult, HaltOutput, error) {
	active := func(r graph.RunInfo) bool { return r.Active }
	store, id, err := s.pick(ctx, in.RunID, active)
	if errors.Is(err, inspect.ErrNoMatchingRun) {
		return nil, HaltOutput{}, fmt.Errorf("no run is running in %s: nothing to halt (lemmings runs lists the runs)", s.opts.Root)
	}
	if err != nil {
		return nil, HaltOutput{}, err
	}
	// store is nil for a run still starting: its first checkpoint finds the
	// request; so does a resume started here that has not taken the run yet.
	if c := s.childOf(id); store != nil && (c == nil || !c.running()) {
		if err := store.Running(ctx, id); err != nil {
			return nil, HaltOutput{}, err
		}
	}
	if err := inspect.RequestHalt(s.opts.Root, id); err != nil {
		return nil, HaltOutput{}, err
	}
	s.logf("run %s: halt requested", id)
	return nil, HaltOutput{RunID: id, Requested: true,
		Message: fmt.Sprintf("halt requested for %s: it stops within a second, cutting off the model call or gate in flight (resume runs that step again)", id)}, nil
}

// launch starts a lemmings process for the run, stdin on its standard
// input, and answers once it has failed (the CLI's error), taken the run,
// or StartWait has passed. before is when the run was last updated before
// (zero for a new run): a process that ended without moving the run failed
// to start it.
func (s *Server) launch(ctx context.Context, id, verb string, args []string, stdin string, before time.Time) (*mcp.CallToolResult, RunStatus, error) {
	if c := s.childOf(id); c != nil && c.running() {
		return nil, RunStatus{}, fmt.Errorf("run %s is being run by another lemmings process (lemmings halt %s stops it)", id, id)
	}
	c, err := s.start(ctx, id, verb, stdin, args...)
	if err != nil {
		return nil, RunStatus{}, err
	}
	s.settle(ctx, c)
	if !c.running() && (c.code == 2 || !s.moved(ctx, id, before)) {
		return nil, RunStatus{}, c.failure()
	}
	store, _ := inspect.Open(s.opts.Root)
	st, err := s.status(ctx, store, id)
	return nil, st, err
}

// moved reports whether the run was updated after before.
func (s *Server) moved(ctx context.Context, id string, before time.Time) bool {
	snap, err := s.snapshot(ctx, id)
	return err == nil && snap.Updated.After(before)
}

// resumable is the run named, or the latest one that is not done, as
// lemmings resume picks it.
func (s *Server) resumable(ctx context.Context, id string) (string, error) {
	if id == "" {
		return run.LatestResumable(ctx, s.opts.Root)
	}
	_, picked, err := s.pick(ctx, id, nil)
	return picked, err
}

func (s *Server) snapshot(ctx context.Context, id string) (graph.Snapshot[runstate.State], error) {
	store, err := inspect.Open(s.opts.Root)
	if err != nil {
		return graph.Snapshot[runstate.State]{}, err
	}
	return store.Snapshot(ctx, id)
}

// modelFlags are the global flags a tool's model choices add.
func modelFlags(model string, offline, noSupervisors bool) []string {
	var f []string
	if model != "" {
		f = append(f, "--model", model)
	}
	if offline {
		f = append(f, "--offline")
	}
	if noSupervisors {
		f = append(f, "--no-supervisors")
	}
	return f
}

// inputSchema is the schema the SDK would infer for T, to refine (enums,
// bounds) before the tool is added.
func inputSchema[T any]() *jsonschema.Schema {
	sch, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err)) // a build mistake, caught by every test
	}
	return sch
}

func ptr[T any](v T) *T { return &v }
