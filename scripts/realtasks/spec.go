package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/eval"
)

// set is bench/realtasks/tasks.json: our own data about real changes
// between two released versions of real projects. No code of theirs.
type set struct {
	Tasks []spec `json:"tasks"`
}

// spec is one task: the project and its two releases (pinned by hash), the
// remit, the tests held back, the files the change touched.
type spec struct {
	// ID names the task folder (<language>/<id>).
	ID       string `json:"id"`
	Language string `json:"language"` // go: a module from the Go module proxy; python: an sdist from the Python registry
	// Project is the Go module path or the Python package name.
	Project string  `json:"project"`
	Base    release `json:"base"`
	Target  release `json:"target"`
	Kind    string  `json:"kind"`
	Remit   string  `json:"remit"`
	// Source says where the remit and the change were read (an issue, a
	// changelog line): a record for the person who checks the task.
	Source      string `json:"source,omitempty"`
	TestCommand string `json:"test_command,omitempty"`
	// HeldBack are the tests kept from the solver: a target's test file
	// whole, or only the named tests of it spliced into the base's.
	HeldBack []held   `json:"held_back"`
	Changed  []string `json:"changed"`
	// TestFiles overrides the language's test-file patterns.
	TestFiles []string `json:"test_files,omitempty"`
	// Omit are files of the releases' authors' own environment left out of
	// the base ("dir/" for a folder): a .python-version naming an
	// interpreter only they have makes pyenv's python3 another one.
	Omit []string `json:"omit,omitempty"`
}

// omitted reports whether rel is one of the task's omitted files.
func (t spec) omitted(rel string) bool {
	for _, o := range t.Omit {
		if rel == o || (strings.HasSuffix(o, "/") && strings.HasPrefix(rel, o)) {
			return true
		}
	}
	return false
}

type release struct {
	Version string `json:"version"`
	// Hash pins the download: the Go module's h1: sum, or sha256:<hex> of
	// the sdist.
	Hash string `json:"hash"`
}

type held struct {
	File string `json:"file"`
	// Tests, when given, are the declarations taken from the target's file
	// (Go: functions, types, vars, "T.M"; Python: "test_x", "TestC",
	// "TestC::test_m"); the rest of the file is the base's.
	Tests []string `json:"tests,omitempty"`
}

var idRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// loadSet reads and checks the task list; errors name the task and the key.
func loadSet(path string) (*set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s set
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	seen := map[string]bool{}
	for i, t := range s.Tasks {
		where := fmt.Sprintf("%s: task %d (%s)", path, i+1, t.ID)
		switch {
		case !idRe.MatchString(t.ID):
			return nil, fmt.Errorf("%s: id: lower-case letters, digits, '.', '_' and '-'", where)
		case seen[t.Language+"/"+t.ID]:
			return nil, fmt.Errorf("%s: id: given twice", where)
		case t.Language != "go" && t.Language != "python":
			return nil, fmt.Errorf("%s: language: go or python, not %q", where, t.Language)
		case t.Project == "" || t.Base.Version == "" || t.Target.Version == "":
			return nil, fmt.Errorf("%s: project, base.version and target.version are required", where)
		case t.Kind != eval.KindFix && t.Kind != eval.KindFeature:
			return nil, fmt.Errorf("%s: kind: fix or feature, not %q", where, t.Kind)
		case strings.TrimSpace(t.Remit) == "":
			return nil, fmt.Errorf("%s: remit is empty", where)
		case len(t.HeldBack) == 0 || len(t.Changed) == 0:
			return nil, fmt.Errorf("%s: held_back and changed are required", where)
		}
		seen[t.Language+"/"+t.ID] = true
	}
	return &s, nil
}

// stamp identifies what a built task folder was built from: the spec and
// the builder's version.
func (t spec) stamp() string {
	data, _ := json.Marshal(t)
	h := sha256.New()
	h.Write([]byte(builderVersion + "\n"))
	h.Write(splicePy)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// builderVersion changes when a folder built by an older builder must be
// built again (a change to splice.py does that by itself).
const builderVersion = "realtasks-2"
