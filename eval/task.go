package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// TaskFile names the description of a task folder: a real change to a real
// repository (docs/eval.md, "Tasks from real history").
const TaskFile = "task.json"

// Task kinds.
const (
	KindFix     = "fix"
	KindFeature = "feature"
)

// Task is a task folder's task.json: the repository before a real change
// (Repo), the remit the change answers, the tests the change added or
// changed (held back from the solver, under held/), and the files the change
// touched (their changed versions under oracle/, for --oracle).
type Task struct {
	// Project and the versions say where the change comes from (a record:
	// the eval reads only the folder).
	Project string `json:"project"`
	Base    string `json:"base"`
	Target  string `json:"target"`
	// Language names the toolchain the tests need (go, python…).
	Language string `json:"language"`
	// Kind is "fix" or "feature".
	Kind string `json:"kind"`
	// Remit is what the solver is asked, alone: what, not how.
	Remit string `json:"remit"`
	// TestCommand runs the repository's tests (sh -c, at its root); empty:
	// the language's.
	TestCommand string `json:"test_command,omitempty"`
	// Repo is the base: a git bundle (.bundle) whose branch main is one
	// commit, or a tar archive (.tar, .tar.gz, .tgz) of its files.
	Repo string `json:"repo"`
	// HeldBack are the repository paths of the held-back tests; their
	// content is held/<path>. Each replaces (or adds) that file when judging.
	HeldBack []string `json:"held_back"`
	// Changed are the repository paths the real change touched outside the
	// tests; their changed content is oracle/<path>.
	Changed []string `json:"changed"`
	// TestFiles are the patterns (path.Match, on the path or on its base
	// name; "dir/" for a folder) of the repository's test files: what the
	// solver did to them is undone before judging. Empty: the language's.
	TestFiles []string `json:"test_files,omitempty"`
}

// Folders of a task that hold files by repository path.
const (
	HeldDir   = "held"
	OracleDir = "oracle"
)

// defaultTestFiles are the test-file patterns per language.
var defaultTestFiles = map[string][]string{
	"go":     {"*_test.go", "testdata/"},
	"python": {"test_*.py", "*_test.py", "conftest.py", "tests/", "test/", "testing/"},
}

// testPatterns are the task's test-file patterns.
func (t *Task) testPatterns() []string {
	if len(t.TestFiles) > 0 {
		return t.TestFiles
	}
	return defaultTestFiles[t.Language]
}

// IsTestFile reports whether rel (slash-separated, repository-relative) is
// one of the task's test files.
func (t *Task) IsTestFile(rel string) bool {
	base := path.Base(rel)
	for _, p := range t.testPatterns() {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			for _, seg := range strings.Split(path.Dir(rel), "/") {
				if seg == dir {
					return true
				}
			}
			if strings.HasPrefix(rel, dir+"/") {
				return true
			}
			continue
		}
		if m, _ := path.Match(p, rel); m {
			return true
		}
		if m, _ := path.Match(p, base); m && !strings.Contains(p, "/") {
			return true
		}
	}
	return false
}

const taskFix = "fix task.json as docs/eval.md (\"Tasks from real history\") describes it"

// taskKeys are the keys task.json may have; anything else is a mistake
// (a misspelt key would otherwise be ignored silently).
var taskKeys = map[string]bool{"project": true, "base": true, "target": true, "language": true, "kind": true, "remit": true,
	"test_command": true, "repo": true, "held_back": true, "changed": true, "test_files": true}

// loadTask reads the task folder dir.
func loadTask(dir string, langs Languages) (Exercise, *Skip) {
	slug := filepath.Base(dir)
	file := filepath.Join(dir, TaskFile)
	skip := func(id, reason, fix string) (Exercise, *Skip) {
		return Exercise{}, &Skip{ID: id, Dir: dir, Reason: reason, Fix: fix}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return skip(slug, fmt.Sprintf("cannot read %s: %v", file, err), taskFix)
	}
	t, err := ParseTask(data)
	if err != nil {
		return skip(slug, file+": "+err.Error(), taskFix)
	}
	id := t.Language + "/" + slug
	if _, known := langs[t.Language]; !known && t.TestCommand == "" {
		return skip(id, fmt.Sprintf("%s:%d: language: %q has no test command", file, keyLine(data, "language"), t.Language),
			fmt.Sprintf("give test_command in task.json, or --test-command %s='…'", t.Language))
	}
	bad := func(key, msg string) (Exercise, *Skip) {
		return skip(id, fmt.Sprintf("%s:%d: %s: %s", file, keyLine(data, key), key, msg), taskFix)
	}
	if err := checkRel(dir, t.Repo); err != nil {
		return bad("repo", err.Error())
	}
	if repoKind(t.Repo) == "" {
		return bad("repo", fmt.Sprintf("%s is neither a git bundle (.bundle) nor a tar archive (.tar, .tar.gz, .tgz)", t.Repo))
	}
	for _, list := range []struct {
		key, dir string
		paths    []string
	}{{"held_back", HeldDir, t.HeldBack}, {"changed", OracleDir, t.Changed}} {
		for _, rel := range list.paths {
			if !filepath.IsLocal(filepath.FromSlash(rel)) {
				return bad(list.key, fmt.Sprintf("%q is not a path inside the repository", rel))
			}
			if err := checkRel(dir, list.dir+"/"+rel); err != nil {
				return bad(list.key, err.Error())
			}
		}
	}
	return Exercise{ID: id, Slug: slug, Language: t.Language, Dir: dir, Instructions: t.Remit, Task: t}, nil
}

// language is how ex is tested: its language, with a task's own test
// command when it gives one.
func (ex Exercise) language(langs Languages) Language {
	if ex.Task == nil || ex.Task.TestCommand == "" {
		return langs[ex.Language]
	}
	if _, ok := langs[ex.Language]; !ok {
		return langs.WithTestCommand(ex.Language, ex.Task.TestCommand)[ex.Language]
	}
	l := langs[ex.Language]
	l.Test = ex.Task.TestCommand
	return l
}

// ParseTask reads a task.json. Its errors name the line and the key.
func ParseTask(data []byte) (*Task, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, errors.New(jsonErr(data, err))
	}
	for k := range raw {
		if !taskKeys[k] {
			return nil, fmt.Errorf("line %d: unknown key %q (the keys are project, base, target, language, kind, remit, test_command, repo, held_back, changed, test_files)", keyLine(data, k), k)
		}
	}
	var t Task
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&t); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("line %d: %s: a %s, not a JSON %s", keyLine(data, te.Field), te.Field, te.Type, te.Value)
		}
		return nil, errors.New(jsonErr(data, err))
	}
	required := []struct {
		key   string
		empty bool
	}{{"language", t.Language == ""}, {"kind", t.Kind == ""}, {"remit", strings.TrimSpace(t.Remit) == ""}, {"repo", t.Repo == ""},
		{"held_back", len(t.HeldBack) == 0}, {"changed", len(t.Changed) == 0}}
	for _, r := range required {
		if r.empty {
			if _, there := raw[r.key]; there {
				return nil, fmt.Errorf("line %d: %s is empty", keyLine(data, r.key), r.key)
			}
			return nil, fmt.Errorf("line 1: %s is missing", r.key)
		}
	}
	if t.Kind != KindFix && t.Kind != KindFeature {
		return nil, fmt.Errorf("line %d: kind: %q, not %q or %q", keyLine(data, "kind"), t.Kind, KindFix, KindFeature)
	}
	return &t, nil
}

// keyLine is the line of key's first occurrence as a JSON key (1 if none).
func keyLine(data []byte, key string) int {
	re := regexp.MustCompile(`"` + regexp.QuoteMeta(key) + `"\s*:`)
	loc := re.FindIndex(data)
	if loc == nil {
		return 1
	}
	return 1 + bytes.Count(data[:loc[0]], []byte("\n"))
}

// repoKind says how a task's base is stored: "bundle", "tar", "tgz" or "".
func repoKind(name string) string {
	switch {
	case strings.HasSuffix(name, ".bundle"):
		return "bundle"
	case strings.HasSuffix(name, ".tar"):
		return "tar"
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		return "tgz"
	}
	return ""
}

// isTaskDir reports whether p is a task folder.
func isTaskDir(p string) bool {
	fi, err := os.Stat(filepath.Join(p, TaskFile))
	return err == nil && !fi.IsDir()
}
