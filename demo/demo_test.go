package demo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
)

func TestDemoRunsEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	var events []graph.Event
	res, err := Run(context.Background(), Options{Dir: dir, Warn: os.Stderr, Sinks: []graph.Sink{graph.SinkFunc(func(e graph.Event) {
		events = append(events, e)
		if e.Kind == graph.EventCustom || e.Kind == graph.EventNodeStart || e.Kind == graph.EventError {
			t.Logf("%s %s %s %s %s", e.Kind, e.Node, e.Name, e.Error, e.Data)
		}
	})}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("status %s outcome %s stop %q", res.Status, res.State.Outcome, res.State.StopReason)
	data, _ := os.ReadFile(filepath.Join(res.RunDir, "report.md"))
	t.Logf("report:\n%s", data)
}
