package implementor

// The draws of one code request. A small coder's first reply is often
// wrong and its second, asked differently, right; but every draw costs a
// call, and a failure that draws five times costs five times a success.
// Which draw comes next is a small policy over what the candidates so far
// did (docs/implementor.md has what each kind of draw was measured to win):
//
//   - a plain draw: the request as it is, at the role's temperature, then
//     at raised ones (an unusable reply is drawn again so);
//   - a repair: the first candidate that landed and failed, what failed
//     ("Your code does not build: …", "The checks ran on your code: …") and
//     the request again, in the same conversation; again once more when the
//     repair builds no better but fails elsewhere (progress, as in Aider's
//     lint rounds);
//   - a lesson: the request with what the first failure taught, without
//     the failed code (which a small coder copies back);
//   - planned draws: the lesson, and a short plan asked before the code.
//
// A candidate that is the file as it was shown skips the repair and the
// lesson for the plan. The drawing stops when a candidate passes, when the
// draws are spent, when a reply was cut at the reply limit (the same prompt
// would be cut again), and when the candidates stop getting closer: two in a
// row that fail as the one before them (the same build error, the same
// failing checks, the same code) end it, so a failure costs a few calls, not
// every draw.

import (
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
)

// drawKind is how a code request is asked.
type drawKind int

const (
	drawPlain drawKind = iota
	drawRepair
	drawLesson
	drawPlanned
)

func (k drawKind) String() string {
	return [...]string{"plain", "repair", "lesson", "planned"}[k]
}

// stillLimit candidates in a row that came no closer than the one before
// end the drawing.
const stillLimit = 2

// draw is the next call of a code request: its kind, and the sample whose
// temperature and seed it is drawn at (0: the role's own).
type draw struct {
	kind   drawKind
	sample int
}

// verdict is what became of one candidate, as the policy reads it.
type verdict struct {
	unusable bool // the reply could not be read into code
	cut      bool // the reply was cut at the reply limit
	repeated bool // the same code as a candidate before
	landed   bool // its code was put in place (and then undone)
	passed   bool // it landed and the gates passed
	copied   bool // its code is the file as it was shown
	// build is the build error it introduced ("" when it built); failure
	// says what failed, build error or checks, as compared between
	// candidates (failureSignature).
	build   string
	failure string
}

// drawPolicy decides the draws of one code request.
type drawPolicy struct {
	left     int  // draws left
	learn    bool // lesson and planned draws may be made (a direct request)
	repairs  bool // a failed candidate may be repaired (a direct request)
	drawn    int  // draws made
	repaired bool
	lesson   bool // a candidate landed and failed: there is a lesson
	learned  int  // lesson and planned draws made
	last     draw
	build    string // the last build error seen
	failure  string // the last landed candidate's failure
	still    int    // candidates in a row no closer than the one before
}

func newDrawPolicy(draws int, learn, repairs bool) *drawPolicy {
	return &drawPolicy{left: max(1, draws), learn: learn, repairs: repairs}
}

// first is the first draw: the request as it is.
func (p *drawPolicy) first() draw {
	p.left--
	p.drawn = 1
	p.last = draw{kind: drawPlain}
	return p.last
}

// next is the draw after a candidate that did not pass, or false when the
// drawing ends.
func (p *drawPolicy) next(v verdict) (draw, bool) {
	if v.passed || v.cut {
		return draw{}, false
	}
	closer := !v.unusable && !v.repeated && v.landed && v.failure != p.failure
	if closer {
		p.still = 0
	} else {
		p.still++
	}
	onward := p.last.kind == drawRepair && v.build != "" && v.build != p.build
	if v.build != "" {
		p.build = v.build
	}
	if v.landed {
		p.failure = v.failure
		p.lesson = true
	}
	if p.left <= 0 || p.still >= stillLimit {
		return draw{}, false
	}
	if v.copied && p.learned == 0 {
		p.learned = 1 // the bare request is answered by a copy: the plan at once
	}
	var d draw
	switch {
	case p.repairs && v.landed && !v.copied && (!p.repaired || onward):
		p.repaired = true
		d = draw{kind: drawRepair}
	case p.lesson && p.learn && p.learned == 0:
		p.learned++
		d = draw{kind: drawLesson}
	case p.lesson && p.learn:
		d = draw{kind: drawPlanned, sample: p.learned - 1}
		p.learned++
	default:
		d = draw{kind: drawPlain, sample: p.drawn}
	}
	p.left--
	p.drawn++
	p.last = d
	return d, true
}

// codeRequest is one code call as a value: what is sent, how the reply
// opens and ends, its budget and its sampling.
type codeRequest struct {
	messages []llm.Message
	prefill  string
	stops    []string
	budget   int
	sample   int
}

// digits and hex addresses differ between two runs of the same failure.
var (
	failureNoise = regexp.MustCompile(`0x[0-9a-f]+|\d+(?:\.\d+)?`)
	// failingName finds a failing test's name: Go's `--- FAIL: TestX`,
	// pytest's `FAILED path::test_x`, a traceback's `test_x`.
	failingName = regexp.MustCompile(`(?m)--- FAIL: (\w+)|FAILED \S*::(\w+)|^(?:ERROR|FAIL):? (\w+)`)
)

// failureSignature is what two failures are compared by: the failing tests'
// names when the output has them, else the output, without the numbers that
// differ from run to run (times, line numbers moved by an edit).
func failureSignature(text string) string {
	var names []string
	for _, m := range failingName.FindAllStringSubmatch(text, -1) {
		if n := m[1] + m[2] + m[3]; n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		return "tests: " + strings.Join(names, " ")
	}
	return failureNoise.ReplaceAllString(strings.TrimSpace(text), "#")
}
