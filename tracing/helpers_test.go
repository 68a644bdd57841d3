package tracing_test

import (
	"fmt"
	"testing"

	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

func treeOf(t *testing.T, spans []otlptest.Span) *otlptest.Tree {
	t.Helper()
	tr, err := otlptest.NewTree(spans)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func anyString(v any) string { return fmt.Sprint(v) }
