package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/runview"
)

// runRow is one line of the runs page.
type runRow struct {
	ID, Status, Remit, Branch, Err string
	Done, Failed                   int
	Cost                           float64
	Duration                       time.Duration
	Updated                        time.Time
}

func rowOf(root string, r inspect.Run, v runview.View) runRow {
	row := runRow{ID: r.ID, Status: r.DisplayStatus(), Updated: r.Updated}
	if r.Err != nil {
		row.Err = r.Err.Error()
		return row
	}
	row.Remit, row.Branch, row.Done, row.Failed, row.Cost = v.Remit, v.Branch, v.Tasks.Completed, v.Tasks.Failed, v.Total.CostUSD
	row.Duration = inspect.Duration(root, r, time.Now())
	return row
}

// runPage is everything the run page shows. Each section carries its own
// error, so a damaged part of a run leaves the rest readable.
type runPage struct {
	Run       runRow
	Active    bool
	Resumable bool
	Step      int
	// Standing is the run's status with its reason and next step, as
	// lemmings status says them.
	Standing  runstate.Standing
	Reason    string // why it paused
	Error     string // why it failed
	PausedFor string
	Halting   bool
	Resume    *resumeStatus
	Phase     string
	Current   *runstate.Task
	Board     []milestoneRow
	Graph     template.HTML
	GraphErr  string

	Events      []eventRow
	EventsTotal int
	EventsBad   int
	EventsFrom  int64
	EventsErr   string
	Live        bool

	Gates    []runview.Verdict
	GatesErr string

	Commits    []commitView
	CommitsErr string

	Usage      []runview.RoleUsage
	TokensSVG  template.HTML
	CostSVG    template.HTML
	Directives []runview.Directive
	Supervisor []runstate.SupervisorRun
	// Tells are the messages the user told the run, Telling those it has
	// not taken in yet; CanTell: the run has not ended (docs/time-travel.md).
	Tells     []runstate.ToldMessage
	Telling   []runstate.TellRequest
	CanTell   bool
	Report    template.HTML
	ReportErr string
	Warnings  []string
}

// milestoneRow is a milestone of the board; Current only while the run
// goes (an ended run has none to highlight).
type milestoneRow struct {
	runview.Milestone
	Current bool
}

type eventRow struct {
	Step  int       `json:"step"`
	Time  time.Time `json:"time"`
	Node  string    `json:"node"`
	Kind  string    `json:"kind"`
	Text  string    `json:"text"`
	Class string    `json:"class"`
}

type commitView struct {
	SHA, Subject, Task, When string
	Diff                     []diffLine
	Cut                      bool
}

type diffLine struct{ Class, Text string }

// maxEventsShown bounds the timeline a page carries; the stream adds the rest.
const maxEventsShown = 400

func (s *Server) buildRun(ctx context.Context, id string, full bool) (*runPage, error) {
	store, err := s.store()
	if err != nil {
		return nil, err
	}
	r, err := store.Find(ctx, id)
	if err != nil {
		// Not listed: it may still have a damaged checkpoint dir of its own.
		r = store.Get(ctx, id)
		if r.Err != nil && errors.Is(r.Err, graph.ErrRunNotFound) {
			if _, serr := os.Stat(inspect.RunDir(s.opts.Root, id)); serr != nil {
				return nil, err
			}
		}
	}
	view := r.View()
	v := &runPage{Run: rowOf(s.opts.Root, r, view), Active: r.Active, Step: r.Step, Reason: r.Reason, Error: r.Error,
		Halting: s.source().HaltRequested(ctx, id), Resume: s.resumeStatus(id)}
	v.Live = r.Status != graph.StatusDone || v.Resume != nil
	if r.Err == nil {
		v.Standing = view.Standing
		v.Phase, v.Current, v.Warnings = view.Phase, view.Current, view.Warnings
		for _, m := range view.Board {
			row := milestoneRow{Milestone: m, Current: m.Current && !view.Ended}
			if m.Current && view.Ended {
				row.InProgress, row.Planned = nil, nil // the page shows no work left open on an ended run's board
			}
			v.Board = append(v.Board, row)
		}
		v.Resumable = !r.Active && r.Status != graph.StatusDone && v.Resume == nil
		if r.Status == graph.StatusPaused {
			snap, err := store.Snapshot(ctx, id)
			if err == nil {
				v.PausedFor, _ = inspect.PausedFor(snap)
			}
		}
	}
	v.Graph, v.GraphErr = workflowSVG(r)
	if !full {
		return v, nil
	}
	events := v.loadEvents(ctx, s.source(), id)
	if r.Err == nil {
		v.Gates, v.GatesErr = s.gateRuns(ctx, store, id)
		v.Commits, v.CommitsErr = s.commitsOf(ctx, id, view)
		v.Usage = view.Usage
		v.Directives = view.Directives
		v.Supervisor = view.Supervisors
		v.Tells, v.CanTell = view.Tells, r.Status != graph.StatusDone
		v.Telling, _ = runstate.PendingTells(inspect.RunDir(s.opts.Root, id))
		v.Telling = slices.DeleteFunc(v.Telling, func(t runstate.TellRequest) bool {
			return slices.ContainsFunc(v.Tells, func(m runstate.ToldMessage) bool { return m.ID == t.ID })
		})
		v.TokensSVG, v.CostSVG = usageCharts(events, view)
	}
	if data, err := s.source().Report(ctx, id); err != nil {
		v.ReportErr = err.Error()
	} else {
		v.Report = markdownHTML(data)
	}
	return v, nil
}

// loadEvents reads the event log, keeps its tail for the timeline and
// returns all of it (the usage chart reads it too).
func (v *runPage) loadEvents(ctx context.Context, src Source, id string) []graph.Event {
	got, err := src.Events(ctx, id, 0, 0)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			v.EventsErr = err.Error()
		} else {
			v.EventsErr = "no event log"
		}
		return nil
	}
	// The count is of the timeline's rows, as the page's script counts the
	// new ones: a model call's progress ticks are not rows.
	evs := timeline(got.Events)
	v.EventsTotal, v.EventsBad, v.EventsFrom = len(evs), got.Bad, got.Next
	if len(evs) > maxEventsShown {
		evs = evs[len(evs)-maxEventsShown:]
	}
	for i := len(evs) - 1; i >= 0; i-- { // newest first, as the stream adds them
		v.Events = append(v.Events, eventRowOf(evs[i]))
	}
	return got.Events
}

// inTimeline says whether an event gets a row of the timeline: a model
// call's progress (once a second) shows in the "now" line instead.
func inTimeline(ev graph.Event) bool {
	return !(ev.Kind == graph.EventCustom && ev.Name == "llm_progress")
}

func timeline(evs []graph.Event) []graph.Event {
	out := make([]graph.Event, 0, len(evs))
	for _, ev := range evs {
		if inTimeline(ev) {
			out = append(out, ev)
		}
	}
	return out
}

func eventRowOf(ev graph.Event) eventRow {
	row := eventRow{Step: ev.Step, Time: ev.Time, Node: ev.Node, Kind: ev.Kind, Class: "ev-" + ev.Kind}
	if ev.Kind == graph.EventCustom {
		row.Kind = ev.Name
		row.Class = "ev-" + ev.Name
	}
	row.Text = eventText(ev)
	return row
}

// eventText is a one-line summary of an event.
func eventText(ev graph.Event) string {
	switch ev.Kind {
	case graph.EventCustom:
		data, _ := events.Decode(ev)
		if text, ok := workText(data); ok {
			return text
		}
		switch d := data.(type) {
		case *events.WorldReset:
			return runview.ResetText(d)
		case *events.Warning:
			return d.Message
		case *events.Told, *events.TaskUndone, *events.Forked:
			return runview.SteerText(d)
		case *events.SupervisorDone:
			return fmt.Sprintf("%v: %s", d.Supervisor, d.Summary)
		case *events.TaskPlanned:
			return fmt.Sprintf("%v %s", d.Task, d.Title)
		}
		m := events.Fields(ev) // any other event: what it carries, key by key
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			var text string
			if f, ok := m[k].(float64); ok {
				text = strconv.FormatFloat(f, 'g', 6, 64) // not 0.10980000000000001
			} else {
				b, _ := json.Marshal(m[k])
				text = string(b)
			}
			parts = append(parts, k+"="+textutil.Clip(text, 80))
		}
		return strings.Join(parts, " ")
	case graph.EventNodeEnd:
		if ev.Duration < time.Millisecond {
			return ev.Node + " in <1ms"
		}
		return fmt.Sprintf("%s in %s", ev.Node, ev.Duration.Round(time.Millisecond))
	case graph.EventError:
		return ev.Error
	case graph.EventRunEnd, graph.EventInterrupt:
		if text, ok := runview.StandingSetText(ev); ok {
			return text
		}
		return strings.TrimSpace(string(ev.Status) + " " + ev.Reason + " " + ev.Error)
	case graph.EventCheckpoint:
		return strings.Join(ev.Changed, ", ")
	case graph.EventRunStart:
		if ev.Step > 0 {
			return runview.ResumedText(ev)
		}
	}
	return strings.TrimSpace(ev.Node + " " + ev.Error)
}

// gateRuns collects every QA verdict of the run, with the gates' output, from
// the checkpoints of the steps where QA ran. A checkpoint never changes once
// written, so each is read once.
func (s *Server) gateRuns(ctx context.Context, store *inspect.Store, id string) ([]runview.Verdict, string) {
	hist, err := store.Reader().History(ctx, id)
	if err != nil {
		return nil, err.Error()
	}
	var out []runview.Verdict
	for _, h := range hist {
		if !slices.Contains(h.Nodes, runstate.NodeQA) {
			continue
		}
		key := fmt.Sprintf("%s@%d", id, h.Step)
		s.cacheMu.Lock()
		cached, ok := s.qaCache[key]
		s.cacheMu.Unlock()
		if !ok {
			st, err := store.Reader().StateAt(ctx, id, h.Step)
			if err != nil {
				return out, err.Error()
			}
			cached = nil
			if g := runview.VerdictOf(&st); g != nil {
				g.Step = h.Step
				cached = []runview.Verdict{*g}
			}
			s.cacheMu.Lock()
			s.qaCache[key] = cached
			s.cacheMu.Unlock()
		}
		out = append(out, cached...)
	}
	return out, ""
}

var shaPattern = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// maxDiffBytes bounds one commit's diff on the run page.
const maxDiffBytes = 200 << 10

// commitsOf lists the run branch's commits with their diffs (real git).
func (srv *Server) commitsOf(ctx context.Context, id string, s runview.View) ([]commitView, string) {
	if s.Branch == "" || s.BaseCommit == "" {
		return nil, ""
	}
	root, err := srv.source().GitDir(ctx, id, s.Branch)
	if err != nil {
		return nil, err.Error()
	}
	out, err := gitOut(ctx, root, "log", "--reverse", "--no-color", "--format=%H%x1f%s%x1f%aI%x1f%(trailers:key=Lemmings-Task,valueonly)%x1e", s.BaseCommit+".."+s.Branch, "--")
	if err != nil {
		return nil, err.Error()
	}
	var commits []commitView
	for _, rec := range strings.Split(out, "\x1e") {
		rec = strings.TrimSpace(rec)
		if rec == "" {
			continue
		}
		f := strings.SplitN(rec, "\x1f", 4)
		if len(f) < 4 {
			continue
		}
		c := commitView{SHA: f[0], Subject: f[1], When: f[2], Task: strings.TrimSpace(f[3])}
		if t, err := time.Parse(time.RFC3339, f[2]); err == nil {
			c.When = t.Local().Format("2006-01-02 15:04:05")
		}
		c.Diff, c.Cut = diffOf(ctx, root, c.SHA)
		commits = append(commits, c)
	}
	// Newest first: the latest work is what one looks at.
	slices.Reverse(commits)
	return commits, ""
}

func diffOf(ctx context.Context, root, sha string) ([]diffLine, bool) {
	out, err := gitOut(ctx, root, "show", "--no-color", "--format=", "--stat", "--patch", sha, "--")
	if err != nil {
		return []diffLine{{Class: "d-err", Text: err.Error()}}, false
	}
	cut := len(out) > maxDiffBytes
	if cut {
		out = out[:maxDiffBytes]
	}
	var lines []diffLine
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		cls := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff --git"):
			cls = "d-file"
		case strings.HasPrefix(l, "+"):
			cls = "d-add"
		case strings.HasPrefix(l, "-"):
			cls = "d-del"
		case strings.HasPrefix(l, "@@"):
			cls = "d-hunk"
		}
		lines = append(lines, diffLine{Class: cls, Text: l})
	}
	return lines, cut
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := gitsafe.Command(ctx, dir, args...) // the run's diff: no textconv or diff driver of the repository's runs
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return string(out), nil
}
