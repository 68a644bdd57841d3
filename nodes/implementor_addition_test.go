package nodes

// An addition to a type of a file edited by unit (nodes/implementor/
// addition.go), through the real Implementor: the request shows the type as
// its users see it and asks for the new method alone, which lands after
// the type's last method; a reply that rewrites the constructor is refused
// and asked again, never spliced over it.

import (
	"context"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

const versionGo = `package version

import "strings"

// Version is a parsed version.
type Version struct {
	segments []int
	pre      string
}

// NewVersion parses v.
func NewVersion(v string) (*Version, error) {
	return &Version{segments: []int{1, 0}, pre: strings.TrimSpace(v)}, nil
}

// String gives the version back.
func (v *Version) String() string { return v.pre }

// Segments are the numbers.
func (v *Version) Segments() []int { return v.segments }

// Compare compares two versions.
func Compare(a, b *Version) int { return 0 }
`

const isZero = "// IsZero reports whether every segment is zero.\nfunc (v *Version) IsZero() bool {\n\tfor _, s := range v.segments {\n\t\tif s != 0 {\n\t\t\treturn false\n\t\t}\n\t}\n\treturn true\n}\n"

// isZeroGate passes when IsZero is a method of Version and NewVersion still
// fills the segments.
var isZeroGate = workspace.Gate{Name: "check", Command: `grep -q 'func (v \*Version) IsZero() bool' version.go && grep -q 'segments: \[\]int{1, 0}' version.go || { echo "version_test.go:9: IsZero missing or NewVersion broken"; exit 1; }`}

func newAdditionRun(t *testing.T, replies ...string) *weakRun {
	t.Helper()
	var rs []llmtest.Reply
	for _, r := range replies {
		rs = append(rs, text(r))
	}
	r := newWeakRun(t, implementor.EditText, map[string]string{"version.go": versionGo}, rs...)
	r.d.Settings.WholeFileLines = 10 // version.go is edited by unit, as a long file is
	r.d.Gates = []workspace.Gate{isZeroGate}
	r.task.Title = "Add a method IsZero to Version"
	r.task.Instructions = "Add a method IsZero to Version that reports whether all segments are zero."
	return r
}

func TestAnAdditionAsksForTheNewMethodAloneAndPutsItAfterTheTypesMethods(t *testing.T) {
	t.Parallel()
	r := newAdditionRun(t, "```go\n"+isZero+"```\n")
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	ask := r.model.recorded()[0].LastUser()
	for _, want := range []string{"type Version struct", "func NewVersion(v string) (*Version, error)", "func (v *Version) String() string", "Write the new method IsZero of Version"} {
		if !strings.Contains(ask, want) {
			t.Errorf("the request lacks %q:\n%s", want, ask)
		}
	}
	want := strings.Replace(versionGo, "func (v *Version) Segments() []int { return v.segments }\n", "func (v *Version) Segments() []int { return v.segments }\n\n"+isZero, 1)
	if got := r.file(t, "version.go"); got != want {
		t.Errorf("version.go:\n%s\nwant:\n%s", got, want)
	}
}

func TestAnAdditionThatRewritesTheConstructorIsRefusedAndAskedAgain(t *testing.T) {
	t.Parallel()
	ctor := "func NewVersion(v string) (*Version, error) {\n\treturn &Version{}, nil\n}\n\n"
	r := newAdditionRun(t, "```go\n"+ctor+isZero+"```\n", "```go\n"+isZero+"```\n")
	r.d.Settings.Draws = 2
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	if got := r.file(t, "version.go"); !strings.Contains(got, "segments: []int{1, 0}") || !strings.Contains(got, "func (v *Version) IsZero() bool") {
		t.Errorf("the constructor was spliced over, or IsZero is missing:\n%s", got)
	}
	if n := len(r.model.recorded()); n != 2 {
		t.Errorf("%d calls, want 2: the refused reply, then the new method alone", n)
	}
}

const loadGo = `package props

import "strings"

// Load reads data.
func Load(data string) string {
	return data
}

// LoadString reads a string.
func LoadString(s string) string {
	return s
}

// Other is left alone.
func Other() {}
`

// A quick task is the whole remit, not only its first sentence: a unit the
// remit names further on may be rewritten with the one asked for.
func TestAUnitTheRemitNamesLaterMayBeRewrittenToo(t *testing.T) {
	t.Parallel()
	both := "```go\n// Load reads data.\nfunc Load(data string) string {\n\treturn strings.TrimPrefix(data, \"\\ufeff\")\n}\n\n// LoadString reads a string.\nfunc LoadString(s string) string {\n\treturn strings.TrimPrefix(s, \"\\ufeff\")\n}\n```\n"
	r := newWeakRun(t, implementor.EditText, map[string]string{"props.go": loadGo}, text(both))
	r.d.Settings.WholeFileLines = 5
	r.d.Gates = []workspace.Gate{{Name: "check", Command: `test "$(grep -c TrimPrefix props.go)" = 2`}}
	r.task.Title, r.task.Instructions = "Files often start with a byte order mark", "Carry out the remit."
	remit := "Files often start with a byte order mark. Load must drop it, and LoadString too."
	out, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task, Quick: true, Remit: remit})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Implementation; res.Status != runstate.ImplFinished || strings.Count(r.file(t, "props.go"), "TrimPrefix") != 2 {
		t.Errorf("status %s (%s):\n%s", res.Status, res.Summary, r.file(t, "props.go"))
	}
}
