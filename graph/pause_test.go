package graph

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// approval is a state whose "ask" node pauses until a decision is set, as
// lemmings' approvals do: the node runs, then interrupts.
type approval struct {
	Asked    int
	Decided  bool
	Log      []string `graph:"append"`
	Secret   string
	Children []approvalItem
}

type approvalItem struct{ Note string }

func approvalGraph() *Graph[approval] {
	return New[approval]().
		AddNode("ask", func(_ context.Context, s approval) (approval, error) {
			s.Asked++
			s.Log = append(s.Log, "ask")
			if !s.Decided {
				return s, Interrupt("approve the plan")
			}
			return s, nil
		}).
		AddNode("act", func(_ context.Context, s approval) (approval, error) {
			s.Log = append(s.Log, "act")
			return s, nil
		}).
		AddEdge(Start, "ask").AddEdge("ask", "act").AddEdge("act", End)
}

// A paused run whose last record is torn or lost never goes on without its
// decision: the pause is in the record of the step that asked for it, so
// losing the record loses the step, which asks again.
func TestALostPauseRecordNeverSkipsTheApproval(t *testing.T) {
	ctx := context.Background()
	for _, cut := range []string{"torn", "missing"} {
		t.Run(cut, func(t *testing.T) {
			dir := t.TempDir()
			cp, _ := NewFileCheckpointer(dir)
			c := mustCompile(t, approvalGraph(), WithCheckpointer(cp))
			if _, err := c.Run(ctx, "p", approval{}); !errors.Is(err, ErrPaused) {
				t.Fatalf("run: %v", err)
			}
			// Cut the last record as a crash while writing it leaves it
			// (torn: a part of it; missing: none of it).
			seg := lastSegment(t, dir, "p")
			data, _ := os.ReadFile(seg)
			sr, err := scanSegment(data, seg)
			if err != nil || len(sr.recs) < 2 {
				t.Fatalf("records: %d, %v", len(sr.recs), err)
			}
			last := sr.recs[len(sr.recs)-1]
			start := len(data) - (frameOver + len(last.Data))
			keep := start
			if cut == "torn" {
				keep = start + (len(data)-start)/2
			}
			if err := os.WriteFile(seg, data[:keep], 0o600); err != nil {
				t.Fatal(err)
			}
			if snap, err := c.State(ctx, "p"); err != nil || snap.Status == StatusPaused {
				t.Fatalf("after the cut: %+v, %v", snap, err)
			}
			// A bare resume: the step that asked runs again and asks again.
			s, err := c.Resume(ctx, "p")
			if !errors.Is(err, ErrPaused) || s.Asked != 1 || strings.Contains(strings.Join(s.Log, " "), "act") {
				t.Fatalf("resume after a lost pause: %+v, %v (want paused again, act not run)", s, err)
			}
			s, err = c.Resume(ctx, "p", WithUpdate(func(s approval) (approval, error) { s.Decided = true; return s, nil }))
			if err != nil || strings.Join(s.Log, " ") != "ask act" {
				t.Fatalf("resume with the decision: %+v, %v", s, err)
			}
		})
	}
}

// WithRedact keeps secrets out of the store, and the run goes on with what
// the store holds, so a resumed run sees exactly what the live one saw.
func TestWithRedactFiltersTheStoreAndTheLiveState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cp, _ := NewFileCheckpointer(dir)
	hide := func(raw []byte) []byte { return bytes.ReplaceAll(raw, []byte("hunter2"), []byte("[gone]")) }
	var seen []string
	g := New[approval]().
		AddNode("write", func(_ context.Context, s approval) (approval, error) {
			s.Secret = "the password is hunter2"
			s.Log = append(s.Log, "log hunter2")
			s.Children = append(s.Children, approvalItem{Note: "child hunter2"})
			return s, nil
		}).
		AddNode("ask", func(_ context.Context, s approval) (approval, error) {
			seen = append(seen, s.Secret, s.Log[len(s.Log)-1], s.Children[0].Note)
			return s, Interrupt("approve hunter2")
		}).
		AddNode("act", func(_ context.Context, s approval) (approval, error) {
			seen = append(seen, s.Secret, s.Log[len(s.Log)-1], s.Children[0].Note)
			return s, nil
		}).
		AddEdge(Start, "write").AddEdge("write", "ask").AddEdge("ask", "act").AddEdge("act", End)
	c := mustCompile(t, g, WithCheckpointer(cp), WithRedact(hide))
	if _, err := c.Run(ctx, "r", approval{Secret: "initial hunter2"}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(lastSegment(t, dir, "r"))
	if bytes.Contains(data, []byte("hunter2")) {
		t.Errorf("the checkpoint holds the secret")
	}
	if got := strings.Join(seen, "|"); got != "the password is [gone]|log [gone]|child [gone]" {
		t.Errorf("the live run saw %q, not what was stored", got)
	}
	snap, err := c.State(ctx, "r")
	if err != nil || snap.Reason != "approve [gone]" || snap.State.Secret != "the password is [gone]" {
		t.Errorf("stored: %+v, %v", snap, err)
	}
	seen = nil
	if _, err := c.Resume(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, "|"); got != "the password is [gone]|log [gone]|child [gone]" {
		t.Errorf("the resumed run saw %q", got)
	}
}

// A run's checkpoints are its owner's only: folders 0700, files 0600.
func TestCheckpointFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkpoints")
	cp, _ := NewFileCheckpointer(dir)
	c := mustCompile(t, line("a", "b"), WithCheckpointer(cp))
	if _, err := c.Run(context.Background(), "m", simple{}); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// One damaged run does not hide the others: ListRuns lists them and names
// the damaged one.
func TestListRunsListsPastADamagedRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cp, _ := NewFileCheckpointer(dir)
	c := mustCompile(t, line("a", "b"), WithCheckpointer(cp))
	for _, id := range []string{"good", "bad"} {
		if _, err := c.Run(ctx, id, simple{}); err != nil {
			t.Fatal(err)
		}
	}
	seg := lastSegment(t, dir, "bad")
	data, _ := os.ReadFile(seg)
	data[len(segMagic)+frameHeader+3] ^= 0x55 // the snapshot's payload
	data[len(data)-6] ^= 0x55                 // and the last record's
	if err := os.WriteFile(seg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	runs, err := c.ListRuns(ctx)
	var dr *DamagedRunsError
	if !errors.As(err, &dr) || dr.Runs["bad"] == nil || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want the damaged run named", err)
	}
	if len(runs) != 1 || runs[0].ID != "good" || runs[0].Status != StatusDone {
		t.Fatalf("runs = %+v, want the good run", runs)
	}
}
