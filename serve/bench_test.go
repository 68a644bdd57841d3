package serve

import (
	"io"
	"net/http/httptest"
	"testing"
)

// BenchmarkRunPage renders the demo run's whole page (checkpoints, event log,
// gates from the QA checkpoints, git log and diffs, charts, report).
func BenchmarkRunPage(b *testing.B) {
	f := newFixture(b, withDone)
	req := httptest.NewRequest("GET", "/runs/"+f.done, nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("run page: %d", rec.Code)
		}
		b.SetBytes(int64(rec.Body.Len()))
		_, _ = io.Copy(io.Discard, rec.Body)
	}
}

// BenchmarkLiveFragment is what a watching browser fetches after each checkpoint.
func BenchmarkLiveFragment(b *testing.B) {
	f := newFixture(b, withDone)
	req := httptest.NewRequest("GET", "/runs/"+f.done+"/live", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("live: %d", rec.Code)
		}
	}
}
