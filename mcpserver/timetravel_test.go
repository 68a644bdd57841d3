package mcpserver

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/run"
)

// An agent takes a task back, tells the stopped run something, resumes it,
// and forks the run from a step rejecting a task — through the tools, every
// run a real lemmings process.
func TestAnAgentUndoesTellsAndForks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &demo.Script{})
	s := f.server(t)
	cs := client(t, s, nil)

	var st RunStatus
	mustCall(t, cs, "run", map[string]any{"remit": demo.Remit, "no_supervisors": true}, &st)
	id := st.RunID
	var w WaitOutput
	mustCall(t, cs, "wait", map[string]any{"run_id": id, "timeout_seconds": 180}, &w)
	if !w.Stopped || w.Run.Status != "done" {
		t.Fatalf("run ended with %+v", w.Run)
	}
	processEnded(t, f.repo, id)

	var h run.RunHistory
	mustCall(t, cs, "history", map[string]any{"run_id": id}, &h)
	step := -1
	for _, s := range h.Steps {
		if s.Node == "mark_complete" && s.Done == 1 {
			step = s.Step
			break
		}
	}
	if step < 0 {
		t.Fatalf("history: no step after t1: %+v", h)
	}

	var u UndoOutput
	mustCall(t, cs, "undo", map[string]any{"run_id": id, "task": "t3", "reason": "the flag should be -n"}, &u)
	if u.Requested || u.Revert == "" || u.Commit == "" {
		t.Fatalf("undo: %+v", u)
	}
	if got := git(t, f.repo, "log", "-1", "--format=%(trailers:key=Lemmings-Undo,valueonly)", "lemmings/"+id); got != "t3" {
		t.Errorf("the branch's last commit is not t3's revert: %q", got)
	}
	var told TellOutput
	mustCall(t, cs, "tell", map[string]any{"run_id": id, "message": "Add a doc comment to MeanWordLength in textstats.go"}, &told)
	if !told.Queued || told.ID == "" {
		t.Fatalf("tell: %+v", told)
	}
	if err := call(t, cs, "tell", map[string]any{"run_id": id, "message": "x", "priority": "urgent"}, nil); err == nil {
		t.Error("a priority that is none of critical, normal, low was accepted")
	}
	mustCall(t, cs, "resume", map[string]any{"run_id": id}, &st)
	mustCall(t, cs, "wait", map[string]any{"run_id": id, "timeout_seconds": 180}, &w)
	if !w.Stopped || w.Run.Status != "done" {
		t.Fatalf("resumed run ended with %+v", w.Run)
	}
	processEnded(t, f.repo, id)
	report, _ := os.ReadFile(filepath.Join(f.repo, ".lemmings", "runs", id, "report.md"))
	for _, want := range []string{"Told by the user", "Taken back by the user", "the flag should be -n", "| user | completed |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if src := git(t, f.repo, "show", "lemmings/"+id+":textstats.go"); !strings.Contains(src, "// MeanWordLength returns the mean") {
		t.Errorf("the told task did not land:\n%s", src)
	}

	var fk RunStatus
	mustCall(t, cs, "fork", map[string]any{"run_id": id, "step": step, "reject_task": "t1", "reason": "convert first"}, &fk)
	if fk.RunID == "" || fk.RunID == id {
		t.Fatalf("fork answered %+v", fk)
	}
	mustCall(t, cs, "wait", map[string]any{"run_id": fk.RunID, "timeout_seconds": 180}, &w)
	if !w.Stopped || w.Run.Status != "done" || w.Run.Branch != "lemmings/"+fk.RunID {
		t.Fatalf("fork ended with %+v", w.Run)
	}
	processEnded(t, f.repo, fk.RunID)
	var fh run.RunHistory
	mustCall(t, cs, "history", map[string]any{"run_id": fk.RunID}, &fh)
	if want := id + "@" + strconv.Itoa(step); fh.ForkedFrom != want {
		t.Errorf("fork's history names %q as its parent, want %q", fh.ForkedFrom, want)
	}
	if st := git(t, f.repo, "status", "--porcelain"); st != "" {
		t.Errorf("checkout changed:\n%s", st)
	}
}
