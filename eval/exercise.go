package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Exercise is one exercise in Exercism's layout: instructions in .docs/, the
// file lists in .meta/config.json, the stub and the tests beside them.
type Exercise struct {
	// ID is "<language>/<slug>", unique within an eval.
	ID       string
	Slug     string
	Language string
	Dir      string
	// Instructions are .docs/introduction.md, instructions.md and
	// instructions.append.md, in that order.
	Instructions string
	Solution     []string
	Test         []string
	Example      []string
	Editor       []string
	// Task is set when the folder is a task from real history (task.json):
	// Instructions is then its remit.
	Task *Task
}

// Skip is an exercise (or a folder) the eval cannot run, with why and the fix.
type Skip struct {
	ID     string
	Dir    string
	Reason string
	Fix    string
	// Folder marks a folder given to the eval that holds no exercise at all.
	Folder bool
}

// metaConfig is the part of .meta/config.json the eval reads.
type metaConfig struct {
	Files struct {
		Solution []string `json:"solution"`
		Test     []string `json:"test"`
		Example  []string `json:"example"`
		Editor   []string `json:"editor"`
	} `json:"files"`
}

const layoutFix = "point lemmings eval at a folder of exercises laid out as Exercism's tracks and Aider's polyglot benchmark lay them out (<slug>/.docs/instructions.md, <slug>/.meta/config.json), e.g. polyglot-benchmark/go/exercises/practice"

// Discover finds the exercises under dirs. A folder is an exercise when it
// has .docs/ or .meta/, a task when it has task.json; folders that lack part of the layout, use an unknown
// language or repeat an ID are returned as skips with the reason and the fix.
func Discover(dirs []string, langs Languages) ([]Exercise, []Skip) {
	var exs []Exercise
	var skips []Skip
	seen := map[string]string{}
	for _, root := range dirs {
		found := 0
		abs, err := filepath.Abs(root)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
		}
		if err != nil {
			skips = append(skips, Skip{ID: root, Dir: root, Reason: fmt.Sprintf("cannot read %s: %v", root, err), Fix: layoutFix, Folder: true})
			continue
		}
		_ = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == abs {
					return err
				}
				return nil
			}
			if !d.IsDir() {
				return nil
			}
			name := d.Name()
			if p != abs && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "target") {
				return filepath.SkipDir
			}
			var ex Exercise
			var skip *Skip
			switch {
			case isTaskDir(p):
				ex, skip = loadTask(p, langs)
			case isExerciseDir(p):
				ex, skip = load(p, langs)
			default:
				return nil
			}
			found++
			if skip != nil {
				skips = append(skips, *skip)
				return filepath.SkipDir
			}
			if first, dup := seen[ex.ID]; dup {
				skips = append(skips, Skip{ID: ex.ID, Dir: p, Reason: "the same exercise as " + first, Fix: "give each exercise once"})
				return filepath.SkipDir
			}
			seen[ex.ID] = p
			exs = append(exs, ex)
			return filepath.SkipDir
		})
		if found == 0 {
			skips = append(skips, Skip{ID: root, Dir: abs, Reason: "no exercise found under " + root + " (no folder with .docs/instructions.md and .meta/config.json, nor with task.json)", Fix: layoutFix, Folder: true})
		}
	}
	sort.Slice(exs, func(i, j int) bool { return exs[i].ID < exs[j].ID })
	return exs, skips
}

func isExerciseDir(p string) bool {
	for _, sub := range []string{".meta", ".docs"} {
		if fi, err := os.Stat(filepath.Join(p, sub)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// load reads one exercise folder.
func load(dir string, langs Languages) (Exercise, *Skip) {
	slug := filepath.Base(dir)
	skip := func(id, reason, fix string) (Exercise, *Skip) {
		return Exercise{}, &Skip{ID: id, Dir: dir, Reason: reason, Fix: fix}
	}
	// Until the file lists are read, the folder names the language.
	early := slug
	if name, _ := langs.detect(dir, nil); name != "" {
		early = name + "/" + slug
	}
	cfgPath := filepath.Join(dir, ".meta", "config.json")
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return skip(early, "no .meta/config.json", "add .meta/config.json with files.solution, files.test and files.example, as Exercism's exercises have")
	}
	var mc metaConfig
	if err := json.Unmarshal(data, &mc); err != nil {
		return skip(early, fmt.Sprintf("%s: %s", cfgPath, jsonErr(data, err)), "fix the JSON of .meta/config.json")
	}
	f := mc.Files
	name, known := langs.detect(dir, f.Solution)
	id := slug
	if name != "" {
		id = name + "/" + slug
	}
	switch {
	case len(f.Solution) == 0:
		return skip(id, cfgPath+": files.solution is empty", "list the files the solver edits in files.solution")
	case len(f.Test) == 0:
		return skip(id, cfgPath+": files.test is empty", "list the test files in files.test")
	}
	for _, list := range [][]string{f.Solution, f.Test, f.Editor} {
		for _, rel := range list {
			if err := checkRel(dir, rel); err != nil {
				return skip(id, fmt.Sprintf("%s: %v", cfgPath, err), "correct the file list in .meta/config.json")
			}
		}
	}
	if !known {
		fix := "lemmings eval knows " + strings.Join(langs.Names(), ", ") + "; give a test command: --test-command LANGUAGE=COMMAND"
		if name != "" {
			fix = fmt.Sprintf("give a test command for %s: --test-command %s='…'", name, name)
		}
		what := strings.Join(f.Solution, ", ")
		return skip(id, "unknown language (solution files: "+what+")", fix)
	}
	var instr []string
	for _, doc := range []string{"introduction.md", "instructions.md", "instructions.append.md"} {
		b, err := os.ReadFile(filepath.Join(dir, ".docs", doc))
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			instr = append(instr, strings.TrimSpace(string(b)))
		} else if doc == "instructions.md" {
			return skip(id, "no .docs/instructions.md", "add the exercise's instructions in .docs/instructions.md")
		}
	}
	return Exercise{ID: id, Slug: slug, Language: name, Dir: dir, Instructions: strings.Join(instr, "\n\n"),
		Solution: f.Solution, Test: f.Test, Example: f.Example, Editor: f.Editor}, nil
}

// checkRel refuses paths that leave the exercise and names files that are missing.
func checkRel(dir, rel string) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("%q is not a path inside the exercise", rel)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		return fmt.Errorf("%s is listed but missing", rel)
	}
	return nil
}

// jsonErr names the line of a JSON syntax error.
func jsonErr(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, err)
	}
	return err.Error()
}

// exampleFiles maps each solution file to the reference solution that
// replaces it: by position when the lists are as long, else by base name,
// else a single example goes to the first solution file.
func (ex Exercise) exampleFiles() (map[string]string, error) {
	if len(ex.Example) == 0 {
		return nil, errors.New("no files.example in .meta/config.json")
	}
	out := map[string]string{}
	if len(ex.Example) == len(ex.Solution) {
		for i, e := range ex.Example {
			out[ex.Solution[i]] = e
		}
	} else {
		for _, e := range ex.Example {
			for _, s := range ex.Solution {
				if filepath.Base(s) == filepath.Base(e) {
					out[s] = e
				}
			}
		}
		if len(out) == 0 && len(ex.Example) == 1 {
			out[ex.Solution[0]] = ex.Example[0]
		}
	}
	for _, e := range out {
		if err := checkRel(ex.Dir, e); err != nil {
			return nil, fmt.Errorf("files.example: %w", err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cannot tell which example file replaces which of %s", strings.Join(ex.Solution, ", "))
	}
	return out, nil
}

// ReferenceSolution returns the exercise's reference solution as the files
// that replace its stub (solution path → content).
func (ex Exercise) ReferenceSolution() (map[string]string, error) {
	files, err := ex.exampleFiles()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for sol, example := range files {
		data, err := os.ReadFile(filepath.Join(ex.Dir, filepath.FromSlash(example)))
		if err != nil {
			return nil, err
		}
		out[sol] = string(data)
	}
	return out, nil
}
