package nodes

// How lemmings' placement does on the tasks from real history (docs/eval.md),
// without a model: the files the remit's words place it in, against the
// files the real change changed.
//
//	LEMMINGS_MEASURE_PLACE=.tools/realtasks go test ./nodes -run TestMeasurePlacement -v
//
// Not run by default: it needs the built task set (make realtasks).

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMeasurePlacement(t *testing.T) {
	root := os.Getenv("LEMMINGS_MEASURE_PLACE")
	if root == "" {
		t.Skip("LEMMINGS_MEASURE_PLACE is not set")
	}
	tasks, _ := filepath.Glob(filepath.Join(root, "*", "*", "task.json"))
	placed, hit := 0, 0
	for _, tj := range tasks {
		data, err := os.ReadFile(tj)
		if err != nil {
			t.Fatal(err)
		}
		var task struct {
			Remit   string   `json:"remit"`
			Changed []string `json:"changed"`
			Repo    string   `json:"repo"`
		}
		if err := json.Unmarshal(data, &task); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if out, err := exec.Command("git", "clone", "-q", filepath.Join(filepath.Dir(tj), task.Repo), dir).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", tj, err, out)
		}
		wt := testWorktree(t, dir)
		p := placer{Work: wt, seen: &placeSeen{}}.place(context.Background(), task.Remit)
		ok := len(p.Change) > 0 && slices.ContainsFunc(p.Change, func(f string) bool { return slices.Contains(task.Changed, f) })
		if p.placed() {
			placed++
		}
		if ok {
			hit++
		}
		t.Logf("%-55s placed=%v hit=%v change=%v real=%v how=%q", strings.TrimPrefix(filepath.Dir(tj), root), p.placed(), ok, p.Change, task.Changed, p.How)
	}
	t.Logf("PLACEMENT tasks=%d placed=%d hit=%d", len(tasks), placed, hit)
}
