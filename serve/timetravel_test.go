package serve

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/run"
)

// A message told from the run page reaches the paused run when it goes on
// and is shown with the directive it became; a run that ended takes none.
func TestTellFromTheRunPageReachesThePausedRun(t *testing.T) {
	f := newFixture(t, withPaused)
	_, page := f.get("/runs/" + f.paused)
	mustContain(t, page, `action="/runs/`+f.paused+`/tell"`, `id="tell-send"`)
	if resp, _ := f.post("/runs/"+f.paused+"/tell", url.Values{"message": {"  "}}); resp.StatusCode != 400 {
		t.Errorf("an empty message: %d, want 400", resp.StatusCode)
	}
	if resp, _ := f.post("/runs/"+f.paused+"/tell", url.Values{"message": {"x"}, "csrf": {"stale"}}); resp.StatusCode != 403 {
		t.Errorf("a message without the form token: %d, want 403", resp.StatusCode)
	}
	msg := "Add a doc comment to MeanWordLength in textstats.go"
	resp, _ := f.post("/runs/"+f.paused+"/tell", url.Values{"message": {msg}, "priority": {"normal"}})
	if resp.StatusCode != 303 {
		t.Fatalf("tell: %d", resp.StatusCode)
	}
	_, page = f.get("/runs/" + f.paused)
	mustContain(t, page, msg, "waiting for the run")
	if resp, _ := f.post("/runs/"+f.paused+"/approve", nil); resp.StatusCode != 303 {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	store, _ := inspect.Open(f.repo)
	waitFor(t, "the run to finish", 90*time.Second, func() bool {
		return store.Get(context.Background(), f.paused).Status == "done"
	})
	st := store.Get(context.Background(), f.paused).State
	if len(st.Tells) != 1 || st.Tells[0].Message != msg {
		t.Fatalf("the run took in %+v", st.Tells)
	}
	_, page = f.get("/runs/" + f.paused)
	mustContain(t, page, "<b>"+st.Tells[0].Directive+"</b> "+msg, "it takes no message")
	if strings.Contains(page, "waiting for the run") {
		t.Error("the delivered message is still shown as waiting")
	}
	if resp, body := f.post("/runs/"+f.paused+"/tell", url.Values{"message": {"more"}}); resp.StatusCode != 409 || !strings.Contains(body, "has ended") {
		t.Errorf("tell to an ended run: %d", resp.StatusCode)
	}
}

// The history page forks the run from a step; the fork runs here and
// finishes on its own branch, the parent untouched.
func TestForkFromHereOnTheHistoryPage(t *testing.T) {
	f := newFixture(t, withDone)
	h, err := run.History(context.Background(), f.repo, f.done)
	if err != nil {
		t.Fatal(err)
	}
	step := -1
	for _, s := range h.Steps {
		if s.Node == "mark_complete" && s.Done == 1 {
			step = s.Step
			break
		}
	}
	code, page := f.get("/runs/" + f.done + "/history")
	if code != 200 || step < 0 {
		t.Fatalf("history page: %d, step %d", code, step)
	}
	mustContain(t, page, `data-step="`+strconv.Itoa(step)+`"`, "Fork from here")
	parentTip := f.git("rev-parse", "lemmings/"+f.done)
	if resp, _ := f.post("/runs/"+f.done+"/fork", url.Values{"step": {strconv.Itoa(step)}, "reject_task": {"t1"}}); resp.StatusCode != 400 {
		t.Errorf("a rejection without a reason: %d, want 400", resp.StatusCode)
	}
	resp, _ := f.post("/runs/"+f.done+"/fork", url.Values{"step": {strconv.Itoa(step)}, "reject_task": {"t1"}, "reason": {"convert first"}})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 303 || !strings.HasPrefix(loc, "/runs/") || loc == "/runs/"+f.done {
		t.Fatalf("fork: %d to %q", resp.StatusCode, loc)
	}
	fork := strings.TrimPrefix(loc, "/runs/")
	store, _ := inspect.Open(f.repo)
	waitFor(t, "the fork to finish", 90*time.Second, func() bool {
		return store.Get(context.Background(), fork).Status == "done"
	})
	if got := f.git("rev-parse", "lemmings/"+f.done); got != parentTip {
		t.Errorf("the parent's branch moved")
	}
	if !strings.Contains(f.git("log", "--format=%(trailers:key=Lemmings-Undo,valueonly)", "main..lemmings/"+fork), "t1") {
		t.Error("no revert of t1 on the fork's branch")
	}
	_, page = f.get("/runs/" + fork + "/history")
	mustContain(t, page, "Forked from <code>"+f.done+"@"+strconv.Itoa(step)+"</code>")
}
