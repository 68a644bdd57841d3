package rag

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

// evalCase is a labelled question: the files that answer it.
type evalCase struct {
	Q    string   `json:"q"`
	Want []string `json:"want"`
}

// goroot returns the local toolchain's GOROOT.
func goroot(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// netHTTPIndex indexes GOROOT/src/net/http with emb into a temp dir.
func netHTTPIndex(tb testing.TB, emb Embedder) (*Index, Stats) {
	tb.Helper()
	root := filepath.Join(goroot(tb), "src", "net", "http")
	if _, err := os.Stat(root); err != nil {
		tb.Skipf("no net/http sources: %v", err)
	}
	ix, err := Open(tb.TempDir(), emb)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	st, err := ix.Update(context.Background(), root, UpdateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return ix, st
}

func loadEval(tb testing.TB, name string) []evalCase {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "eval", name))
	if err != nil {
		tb.Fatal(err)
	}
	var cases []evalCase
	if err := json.Unmarshal(data, &cases); err != nil {
		tb.Fatal(err)
	}
	return cases
}

// recallAt returns the share of questions with an answer file among the
// paths of the top k hits, and the questions missed.
func recallAt(tb testing.TB, ix *Index, cases []evalCase, k int, m Method) (float64, []string) {
	tb.Helper()
	found := 0
	var missed []string
	for _, c := range cases {
		hits, err := ix.SearchWith(context.Background(), c.Q, k, Filter{}, m)
		if err != nil {
			tb.Fatal(err)
		}
		ok := slices.ContainsFunc(hits, func(h Hit) bool { return slices.Contains(c.Want, h.Path) })
		if ok {
			found++
		} else {
			missed = append(missed, c.Q)
		}
	}
	return float64(found) / float64(len(cases)), missed
}

// TestRetrievalQuality measures recall@5 of each method with the offline
// embedder on labelled questions about net/http, and holds the default
// method to a floor so a regression fails.
func TestRetrievalQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes net/http")
	}
	ix, st := netHTTPIndex(t, NewOfflineEmbedder())
	t.Logf("net/http: %s", st)
	// nethttp.json was used to choose the offline embedder's settings;
	// nethttp_heldout.json was written afterwards and never tuned on.
	for _, set := range []string{"nethttp.json", "nethttp_heldout.json"} {
		cases := loadEval(t, set)
		if len(cases) < 25 {
			t.Fatalf("%s: only %d labelled questions", set, len(cases))
		}
		got := map[Method]float64{}
		for _, m := range []Method{Vector, Keyword, Hybrid} {
			r, missed := recallAt(t, ix, cases, 5, m)
			got[m] = r
			t.Logf("%s recall@5 %-7s = %.2f (%d questions); missed: %q", set, m, r, len(cases), missed)
		}
		if got[Hybrid] < 0.7 {
			t.Errorf("%s: hybrid recall@5 = %.2f, want ≥ 0.70", set, got[Hybrid])
		}
	}
}
