package graph_test

import (
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/graph/graphtest"
)

// Both stores of this package pass the suite a third-party store must pass.

func TestMemoryCheckpointerConforms(t *testing.T) {
	graphtest.RunCheckpointerSuite(t, func(*testing.T) graph.Checkpointer { return graph.NewMemoryCheckpointer() })
}

func TestFileCheckpointerConforms(t *testing.T) {
	graphtest.RunCheckpointerSuite(t, func(t *testing.T) graph.Checkpointer {
		cp, err := graph.NewFileCheckpointer(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return cp
	})
}
