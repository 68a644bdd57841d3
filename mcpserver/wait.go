package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runview"
)

// WaitInput says which run to wait for and how long at most.
type WaitInput struct {
	RunID          string `json:"run_id,omitempty" jsonschema:"the run; empty: the most recently updated run"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait at most, in seconds (default 50: clients often give a tool 60 s; at most 600)"`
}

// WaitOutput is how a wait ended.
type WaitOutput struct {
	Run      RunStatus `json:"run"`
	Stopped  bool      `json:"stopped" jsonschema:"the run no longer moves: it ended (done, failed, stopped, interrupted), is paused, or its process is gone (crashed); run.status says which"`
	TimedOut bool      `json:"timed_out" jsonschema:"the wait ended at its timeout while the run still moves: call wait again"`
	Progress []string  `json:"progress" jsonschema:"what happened meanwhile, one line per step (also sent as progress notifications)"`
}

const (
	defaultWait = 50 * time.Second
	maxWait     = 600 * time.Second
	// maxProgressLines bounds what a wait answers with; the notifications
	// carry every line.
	maxProgressLines = 100
)

func (s *Server) waitTool(ctx context.Context, req *mcp.CallToolRequest, in WaitInput) (*mcp.CallToolResult, WaitOutput, error) {
	out := WaitOutput{Progress: []string{}}
	store, id, err := s.pick(ctx, in.RunID, nil)
	if err != nil {
		return nil, out, err
	}
	timeout := defaultWait
	if in.TimeoutSeconds > 0 {
		timeout = min(time.Duration(in.TimeoutSeconds)*time.Second, maxWait)
	}
	deadline := time.Now().Add(timeout)
	if err := run.CheckRunFiles(s.opts.Root, id); err != nil {
		return nil, out, err
	}
	path := inspect.EventsPath(s.opts.Root, id)
	// Progress counts come from the whole log; lines only from what is new.
	f := &eventFormat{}
	var offset int64
	if got, err := inspect.ReadEvents(path, 0, 0); err == nil {
		for _, ev := range got.Events {
			f.line(ev)
		}
		offset = got.Next
	}
	var token any
	if req != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	sent := 0
	readOn := func() error {
		got, err := inspect.ReadEvents(path, offset, 0)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		offset = got.Next
		for _, ev := range got.Events {
			text, notable := f.line(ev)
			if !notable {
				continue
			}
			if len(out.Progress) < maxProgressLines {
				out.Progress = append(out.Progress, text)
			}
			if token != nil {
				sent++
				// A client that went away is no reason to stop waiting here.
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(sent), Message: text})
			}
		}
		return nil
	}
	for {
		if err := readOn(); err != nil {
			return nil, out, err
		}
		if store == nil {
			store, _ = inspect.Open(s.opts.Root) // a run that was starting has written its first checkpoint
		}
		st, err := s.status(ctx, store, id)
		if err != nil {
			return nil, out, err
		}
		out.Run = st
		if !st.Active {
			// What the run wrote between the read above and its end.
			if err := readOn(); err != nil {
				return nil, out, err
			}
			out.Stopped = true
			return nil, out, nil
		}
		if time.Now().After(deadline) {
			out.TimedOut = true
			return nil, out, nil
		}
		select {
		case <-ctx.Done():
			return nil, out, ctx.Err()
		case <-time.After(s.opts.Poll):
		}
	}
}

// eventFormat turns a run's events into the lines lemmings prints on a
// terminal, carrying the counts of the last progress event.
type eventFormat struct {
	counts     runview.Progress
	haveCounts bool
}

// line is the event in one line, and whether lemmings prints it.
func (f *eventFormat) line(ev graph.Event) (string, bool) {
	switch ev.Kind {
	case graph.EventRunStart:
		return "run started", true
	case graph.EventRunEnd:
		s := fmt.Sprintf("run ended: %s", ev.Status)
		if ev.Error != "" {
			s += ": " + textutil.FirstLine(ev.Error)
		}
		return s, true
	case graph.EventNodeStart:
		return strings.TrimSpace(ev.Node + " " + f.summary()), true
	case graph.EventRetry:
		return fmt.Sprintf("retry %s (attempt %d): %s", ev.Node, ev.Attempt, textutil.FirstLine(ev.Error)), true
	case graph.EventInterrupt:
		return "paused: " + ev.Reason, true
	case graph.EventError:
		return fmt.Sprintf("error in %s: %s", ev.Node, textutil.FirstLine(ev.Error)), true
	case graph.EventCustom:
		data, err := events.Decode(ev)
		if data == nil || err != nil {
			return ev.Name, false
		}
		return f.custom(data)
	}
	return fmt.Sprintf("%s %s", ev.Kind, ev.Node), false
}

func (f *eventFormat) custom(data events.Payload) (string, bool) {
	switch d := data.(type) {
	case *events.Progress:
		f.counts = runview.ProgressOf(*d)
		f.haveCounts = true
		return "progress " + f.summary(), false
	case *events.TaskPlanned:
		return fmt.Sprintf("task %v %v", d.Task, d.Title), true
	case *events.Gate:
		if d.Passed {
			return fmt.Sprintf("gate %v passed", d.Gate), true
		}
		return fmt.Sprintf("gate %v FAILED (exit %v)", d.Gate, d.ExitCode), true
	case *events.QA:
		if d.Passed {
			return fmt.Sprintf("QA passed %v", d.Task), true
		}
		return fmt.Sprintf("QA failed %v: %s", d.Task, textutil.FirstLine(d.Feedback)), true
	case *events.Commit:
		return fmt.Sprintf("commit %.10v %v", d.SHA, d.Task), true
	case *events.TaskFailed:
		return fmt.Sprintf("task %v failed: %s", d.Task, textutil.FirstLine(d.Reason)), true
	case *events.SupervisorStart:
		return fmt.Sprintf("supervisor %v started (%v)", d.Supervisor, d.Trigger), true
	case *events.SupervisorDone:
		return fmt.Sprintf("supervisor %v: %v", d.Supervisor, d.Summary), true
	case *events.MilestonesRejected:
		return fmt.Sprintf("milestones rejected (%v): back to the ScopeAgent to plan them again", d.Reason), true
	case *events.Warning:
		return fmt.Sprintf("warning: %v", d.Message), true
	case *events.Told, *events.TaskUndone, *events.Forked:
		return runview.SteerText(d), true
	case *events.Report:
		return fmt.Sprintf("report written: %v", d.Path), true
	}
	return data.Kind(), false
}

func (f *eventFormat) summary() string {
	if !f.haveCounts {
		return ""
	}
	c := f.counts
	s := c.Counts()
	if c.CostUSD > 0 {
		s += fmt.Sprintf(" · $%.4f", c.CostUSD)
	}
	return s + "]"
}
