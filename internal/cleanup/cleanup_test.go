package cleanup

import (
	"errors"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
)

func ids(rs []graph.RunInfo) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestWhichRunsARequestCleans(t *testing.T) {
	t.Parallel()
	runs := []graph.RunInfo{
		{ID: "done1", Status: graph.StatusDone},
		{ID: "paused1", Status: graph.StatusPaused},
		{ID: "live1", Status: graph.StatusRunning, Active: true},
		{ID: "done2", Status: graph.StatusDone},
	}
	damaged := map[string]error{"bad1": errors.New("corrupt")}
	var req *RequestError
	for _, tc := range []struct {
		name    string
		req     Request
		want    []string
		refused bool // a RequestError
		failed  bool // another error
	}{
		{"--finished takes every finished run and no other", Request{Finished: true}, []string{"done1", "done2"}, false, false},
		{"a finished run named is cleaned", Request{RunID: "done1"}, []string{"done1"}, false, false},
		{"a resumable run named is refused without --force", Request{RunID: "paused1"}, nil, true, false},
		{"a resumable run named with --force is cleaned", Request{RunID: "paused1", Force: true}, []string{"paused1"}, false, false},
		{"a run in progress is never cleaned", Request{RunID: "live1", Force: true}, nil, false, true},
		{"a damaged run named is refused without --force", Request{RunID: "bad1"}, nil, true, false},
		{"a damaged run named with --force is cleaned", Request{RunID: "bad1", Force: true}, []string{"bad1"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			todo, _, err := Select(tc.req, runs, damaged)
			switch {
			case tc.refused && !errors.As(err, &req):
				t.Fatalf("err %v, want a refusal", err)
			case tc.failed && (err == nil || errors.As(err, &req)):
				t.Fatalf("err %v, want an error that is not a refusal", err)
			case !tc.refused && !tc.failed && err != nil:
				t.Fatal(err)
			}
			if got := ids(todo); len(got) != len(tc.want) || (len(got) > 0 && fmtIDs(got) != fmtIDs(tc.want)) {
				t.Errorf("cleans %v, want %v", got, tc.want)
			}
		})
	}
	if _, warnings, _ := Select(Request{Finished: true}, runs, damaged); len(warnings) != 1 {
		t.Errorf("--finished must warn of the damaged run it leaves: %v", warnings)
	}
}

func fmtIDs(s []string) string {
	out := ""
	for _, x := range s {
		out += x + ","
	}
	return out
}

func TestARequestNamesOneRunOrAsksForTheFinishedOnes(t *testing.T) {
	t.Parallel()
	var req *RequestError
	for _, r := range []Request{{}, {RunID: "x", Finished: true}, {Finished: true, Force: true}} {
		if err := r.Check(); !errors.As(err, &req) {
			t.Errorf("%+v: %v", r, err)
		}
	}
	if err := (Request{RunID: "x", Force: true}).Check(); err != nil {
		t.Error(err)
	}
}
