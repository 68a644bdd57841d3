package run_test

import (
	"go/format"
	"os/exec"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/runstate"
)

// The one-line fix a real 1.5B model made indented with four spaces, and lemmings committed it
// so (issue 44). The committed file is gofmt's: the model's code is formatted as it lands,
// before the gates and the commit.
func TestGoCodeTheModelIndentsWithSpacesIsCommittedGofmtd(t *testing.T) {
	reply := "textstats.go\n<<<<<<< SEARCH\n\treturn float64(total / len(words))\n}\n=======\n" +
		"    return float64(total) / float64(len(words))\n}\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n    return a + b\n}\n>>>>>>> REPLACE\n"
	r := runLoop(t, runSetup{first: []llmtest.Step{{
		Name: "spaces", Times: 2, Match: implementorFor("Fix MeanWordLength", false),
		Reply: llmtest.Reply{Content: reply},
	}}})
	if r.err != nil || r.result.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v %q", r.err, r.result.State.StopReason)
	}
	done := r.result.State.DoneList[0]
	if done.TaskID != "t1" || done.Commit == "" {
		t.Fatalf("t1 should be committed: %+v", done)
	}
	out, err := exec.Command("git", "-C", r.repo, "show", done.Commit+":textstats.go").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "func Add(a, b int) int {\n\treturn a + b\n}\n") ||
		!strings.Contains(string(out), "\treturn float64(total) / float64(len(words))\n") {
		t.Errorf("t1's commit has the model's spaces:\n%s", out)
	}
	if f, err := format.Source(out); err != nil || string(f) != string(out) {
		t.Errorf("t1's textstats.go is not gofmt's (%v):\n%s", err, out)
	}
}
