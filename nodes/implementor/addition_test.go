package implementor

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/workspace/splice"
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
	return &Version{pre: strings.TrimSpace(v)}, nil
}

// String gives the version back.
func (v *Version) String() string { return v.pre }

// Segments are the numbers.
func (v *Version) Segments() []int { return v.segments }

// Compare compares two versions.
func Compare(a, b *Version) int { return 0 }
`

const parserPy = `class Parser(object):
    """A compiled format."""

    def __init__(self, format, extra_types=None):
        self._format = format
        self._extra = extra_types or {}

    def parse(self, string):
        return string

    def search(self, string):
        return string


def compile(format):
    return Parser(format)
`

func TestAnAdditionIsFoundWithTheTypeItBelongsTo(t *testing.T) {
	t.Parallel()
	goUnits, err := splice.Parser{}.Units(context.Background(), "version.go", []byte(versionGo))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text, name, owner, anchor, kind string
	}{
		{"Add a method IsZero to Version that reports whether all segments are zero", "IsZero", "Version", "Version.Segments", "method"},
		{"Versions cannot say their pre-release part: add a `Prerelease()` method to Version returning it.", "Prerelease", "Version", "Version.Segments", "method"},
		// A field is a change inside the type, not a new declaration.
		{"Add a `Metadata string` field to Version, filled by NewVersion.", "", "", "", ""},
		// A name the file defines is a change of it.
		{"Add a check to `Segments` so that it copies the slice.", "", "", "", ""},
		// Nothing asks for the name: it is only mentioned.
		{"`Compare` ignores `Metadata` on Version.", "", "", "", ""},
	} {
		a, ok := taskAddition(goUnits, tc.text)
		if ok != (tc.name != "") || ok && (a.name != tc.name || a.owner.Name != tc.owner || a.anchor.Name != tc.anchor || a.kind != tc.kind) {
			t.Errorf("%q: found %v %+v; want %q of %q after %q (%s)", tc.text, ok, a, tc.name, tc.owner, tc.anchor, tc.kind)
		}
	}
}

func TestAnAdditionIsShownAsItsUsersSeeTheType(t *testing.T) {
	t.Parallel()
	units, err := splice.Parser{}.Units(context.Background(), "version.go", []byte(versionGo))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := taskAddition(units, "Add a method IsZero to Version")
	if !ok {
		t.Fatal("no addition found")
	}
	view := addView("version.go", versionGo, grain{kind: grainAdd, unit: a.anchor, units: units, add: a})
	for _, want := range []string{
		"type Version struct {",                       // the type
		"func NewVersion(v string) (*Version, error)", // its constructor, whole
		"return &Version{pre: strings.TrimSpace(v)}, nil",
		"func (v *Version) String() string",  // its methods' signatures
		"goes after Version.Segments (lines", // the sibling it goes after, whole
	} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "func Compare") {
		t.Errorf("the view shows a function that is not the type's:\n%s", view)
	}
	ask := addRequest("version.go", grain{kind: grainAdd, add: a}, false)
	if !strings.Contains(ask, "Write the new method IsZero of Version") || !strings.Contains(ask, "only the new method") {
		t.Errorf("request %q", ask)
	}
}

func TestAPythonAdditionShowsTheClassAndItsConstructor(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	units, err := splice.Parser{}.Units(context.Background(), "parse.py", []byte(parserPy))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := taskAddition(units, "A compiled parser should tell which format it was compiled from: give `Parser` a read-only `format` property.")
	if !ok || a.name != "format" || a.owner.Name != "Parser" || a.kind != "property" || a.anchor.Name != "Parser.search" {
		t.Fatalf("found %v %+v", ok, a)
	}
	view := addView("parse.py", parserPy, grain{kind: grainAdd, unit: a.anchor, units: units, add: a})
	for _, want := range []string{"class Parser(object):", "self._format = format", "def parse(self, string):", "def search(self, string):\n        return string"} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
}
