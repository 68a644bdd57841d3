package nodes

import (
	"context"
	"slices"
	"testing"

	"github.com/lemmings-dev/lemmings/runstate"
)

// A remit that asks for a test in a test file it names makes that file one
// the task writes a test in; one that names a test file as the check does
// not.
func TestATestFileTheRemitAsksATestInIsToBeWritten(t *testing.T) {
	t.Parallel()
	for remit, want := range map[string][]string{
		threeChanges: {"textstats_test.go"},
		"Add Median to stats.go and a test to stats_test.go":                                     {"stats_test.go"},
		"Write tests for Mean and Median in stats_test.go.":                                      {"stats_test.go"},
		"Add a regression test for the empty list to `stats_test.go`.":                           {"stats_test.go"},
		"Fix mean in stats.py; add a test to test_stats.py for an empty list":                    {"test_stats.py"},
		"Fix mean in stats.py, with tests in tests/test_stats.py":                                {"tests/test_stats.py"},
		"Add median to stats.py with a new unit test in test_stats.py that fails before the fix": {"test_stats.py"},

		"Fix Mean in stats.go; make stats_test.go pass":                    nil,
		"Fix Mean so that go test passes":                                  nil,
		"Fix Mean in stats.go; do not change the tests in stats_test.go":   nil,
		"Fix Mean in stats.go; do not add tests to stats_test.go":          nil,
		"Fix Mean in stats.go, with the tests in stats_test.go passing":    nil,
		"Fix Mean in stats.go, with a test in stats_test.go still passing": nil,
		"Make the tests in test_stats.py pass":                             nil,
		"Fix mean in stats.py so the tests in tests/test_stats.py pass":    nil,
		"Add a test helper to helpers.go":                                  nil,
	} {
		if got := testsAsked(remit); !slices.Equal(got, want) {
			t.Errorf("%q: tests asked %q, want %q", remit, got, want)
		}
	}
}

// The placement carries the test file asked for, and a list remit's tasks
// and a quick remit's task carry it to the direct attempt.
func TestATestAskedForReachesTheTask(t *testing.T) {
	t.Parallel()
	p := placeIn(t, map[string]string{"go.mod": addGoMod, "add.go": addGo, "add_test.go": addTestGo},
		nil, "Fix Add in add.go, with a test in add_test.go")
	if !slices.Equal(p.Change, []string{"add.go"}) || !slices.Equal(p.Tests, []string{"add_test.go"}) || !slices.Contains(p.Show, "add_test.go") {
		t.Errorf("change %v show %v tests %v", p.Change, p.Show, p.Tests)
	}
	if p := placeIn(t, map[string]string{"go.mod": addGoMod, "add.go": addGo, "add_test.go": addTestGo},
		nil, "Fix Add in add.go so that add_test.go passes"); len(p.Tests) != 0 {
		t.Errorf("a test file named as the check is one to write a test in: %v", p.Tests)
	}

	d := &Deps{Model: failingModel{t}, Settings: DefaultSettings(), Sandbox: sandboxWith(t),
		Work: testRepo(t, map[string]string{"go.mod": "module example.com/textstats\n\ngo 1.22\n", "textstats.go": textstatsGo,
			"textstats_test.go": "package textstats\n"})}
	s, err := d.ScopeAgent(context.Background(), runstate.State{Remit: threeChanges})
	if err != nil {
		t.Fatal(err)
	}
	for i, task := range s.CarryForward {
		if !slices.Equal(task.Tests, []string{"textstats_test.go"}) {
			t.Errorf("list task %d tests %v", i, task.Tests)
		}
	}
	s, err = d.ScopeAgent(context.Background(), runstate.State{Remit: "Fix MeanWordLength in textstats.go, with a test in textstats_test.go"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Quick || len(s.CarryForward) != 1 || !slices.Equal(s.CarryForward[0].Tests, []string{"textstats_test.go"}) {
		t.Errorf("quick %v, tasks %+v", s.Quick, s.CarryForward)
	}
	task := tasksOf(d).newTask(&s, s.CarryForward[0])
	if !slices.Equal(task.Tests, []string{"textstats_test.go"}) {
		t.Errorf("the started task's tests %v", task.Tests)
	}
}
