package implementor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// drive runs a policy over verdicts and says the draws it chose, in order,
// with their samples: "plain/0 repair/0 lesson/0 planned/0 planned/1".
func drive(p *drawPolicy, verdicts ...verdict) string {
	d := p.first()
	out := []string{fmt.Sprintf("%s/%d", d.kind, d.sample)}
	for _, v := range verdicts {
		var ok bool
		if d, ok = p.next(v); !ok {
			break
		}
		out = append(out, fmt.Sprintf("%s/%d", d.kind, d.sample))
	}
	return strings.Join(out, " ")
}

func failing(sig string) verdict { return verdict{landed: true, failure: sig} }
func notBuilding(err string) verdict {
	return verdict{landed: true, build: err, failure: "build: " + err}
}

func TestTheDrawPolicyPicksEachDrawFromTheCandidatesSoFar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		draws    int
		direct   bool
		verdicts []verdict
		want     string
	}{
		{"a failure moving each time: repair, lesson, then plans at rising temperatures", 5, true,
			[]verdict{failing("a"), failing("b"), failing("c"), failing("d"), failing("e")},
			"plain/0 repair/0 lesson/0 planned/0 planned/1"},
		{"the candidates stop getting closer: two that fail as the one before end it", 5, true,
			[]verdict{failing("a"), failing("a"), failing("a"), failing("a")},
			"plain/0 repair/0 lesson/0"},
		{"the same code again counts as no closer", 5, true,
			[]verdict{failing("a"), {repeated: true}, {repeated: true}},
			"plain/0 repair/0 lesson/0"},
		{"a passing candidate ends it", 5, true,
			[]verdict{failing("a"), {passed: true}, failing("c")},
			"plain/0 repair/0"},
		{"a reply cut at the limit ends it: the same prompt would be cut again", 5, true,
			[]verdict{{unusable: true, cut: true}, failing("b")},
			"plain/0"},
		{"an unreadable reply is drawn again plainly, at a raised temperature", 5, true,
			[]verdict{{unusable: true}, failing("b"), failing("c")},
			"plain/0 plain/1 repair/0 lesson/0"},
		{"a copy of the file as shown goes to the plan at once, not to a repair", 5, true,
			[]verdict{{landed: true, copied: true, failure: "a"}, failing("b"), failing("c")},
			"plain/0 planned/0 repair/0 planned/1"},
		{"a repair that builds no better but fails elsewhere is repaired again", 5, true,
			[]verdict{notBuilding("x"), notBuilding("y"), failing("z")},
			"plain/0 repair/0 repair/0 lesson/0"},
		{"outside a direct attempt there is no repair, lesson or plan", 3, false,
			[]verdict{failing("a"), failing("b"), failing("c")},
			"plain/0 plain/1 plain/2"},
		{"one draw is one call", 1, true,
			[]verdict{failing("a")},
			"plain/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := drive(newDrawPolicy(tc.draws, tc.direct, tc.direct), tc.verdicts...); got != tc.want {
				t.Errorf("draws %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAFailureIsComparedByItsTestsOrItsWordsNotItsNumbers(t *testing.T) {
	t.Parallel()
	a := failureSignature("--- FAIL: TestMean (0.01s)\n    stats_test.go:9: got 1\n--- FAIL: TestSum (0.00s)")
	b := failureSignature("--- FAIL: TestSum (0.02s)\n--- FAIL: TestMean (0.00s)\n    stats_test.go:12: got 2")
	if a != b || a != "tests: TestMean TestSum" {
		t.Errorf("the same failing tests compare as %q and %q", a, b)
	}
	if failureSignature("stats.go:9:4: undefined: x") != failureSignature("stats.go:11:2: undefined: x") {
		t.Error("a build error moved by an edit compares as another")
	}
	if failureSignature("stats.go:9:4: undefined: x") == failureSignature("stats.go:9:4: undefined: y") {
		t.Error("two different build errors compare as one")
	}
}

// rateModel is a model whose server reads prompts at a measured speed.
type rateModel struct{ rate float64 }

func (rateModel) Chat(context.Context, llm.Request) (llm.Response, error) { return llm.Response{}, nil }
func (m rateModel) PrefillRate(string) float64                            { return m.rate }

func TestAPromptTheServerCannotReadInTimeIsMadeSmaller(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		model Model
		clock testClock
		want  int
	}{
		{"25 tokens/s and 8 minutes left: what a quarter of them reads", rateModel{25}, testClock{left: 8 * time.Minute, limited: true}, 3000},
		{"no speed measured yet: the budget as it is", rateModel{0}, testClock{left: 8 * time.Minute, limited: true}, 16000},
		{"no wall limit: the budget as it is", rateModel{25}, testClock{}, 16000},
		{"a fast server: the budget as it is", rateModel{2000}, testClock{left: 8 * time.Minute, limited: true}, 16000},
		{"nearly no time left: never below what a task needs", rateModel{25}, testClock{left: time.Minute, limited: true}, minReadable},
	} {
		l := newImplLoop(&Deps{Model: tc.model, Clock: tc.clock}, &runstate.State{}, &runstate.Task{ID: "t1", Attempt: 1})
		if got := l.prefix.readable(16000); got != tc.want {
			t.Errorf("%s: budget %d, want %d", tc.name, got, tc.want)
		}
	}
}
