package implementor

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// implExamples are the names the worked examples of the prompt use: the
// task's own files, the unit it is about and the gates it runs. A small coder
// copies an example as its answer (QWEN-FIRST-RUNS: `"path": "helpers.go"`,
// "Changed Example in helpers.go as the task asks."), so an example whose
// name lemmings does not know from the task or the repository is left out
// rather than filled with an invented one, and no example carries a summary,
// a question or code to return.
type implExamples struct {
	// File is the task's first existing target file, Symbol the unit of it
	// the task is about; Ext, Dir and Lang follow File.
	File, Symbol, Lang, Ext, Dir string
	// NewFile is a target file the task creates (it does not exist yet).
	NewFile string
	// Gate is a gate of the run.
	Gate string
	// Content is a new file's first line in its language (write_file's
	// JSON example): the package clause of the package it joins.
	Content string
}

var goPackageClause = regexp.MustCompile(`(?m)^package\s+(\w+)`)

// examples builds the worked examples' names from the task's target files.
func (pb *prefixBuilder) examples(ctx context.Context) implExamples {
	ex := implExamples{Dir: "."}
	var src string
	for _, f := range CleanFiles(pb.t.TargetFiles) {
		data, err := pb.d.Work.FS().ReadFile(f)
		switch {
		case err != nil && ex.NewFile == "":
			ex.NewFile = f
		case err == nil && ex.File == "" && !IsTestFile(f):
			ex.File, src = f, string(data)
		}
	}
	if len(pb.d.Gates) > 0 {
		ex.Gate = pb.d.Gates[len(pb.d.Gates)-1].Name
	}
	ref := textutil.FirstNonEmpty(ex.File, ex.NewFile)
	if ref != "" {
		ex.Lang, ex.Ext = langOf(ref), path.Ext(ref)
		ex.Dir = path.Dir(ref)
	}
	if ex.NewFile != "" && splice.Language(ex.NewFile) == "go" {
		if m := goPackageClause.FindStringSubmatch(pb.packageSource(ex.NewFile)); m != nil {
			ex.Content = "package " + m[1] + "\n"
		}
	}
	if src != "" && splice.Language(ex.File) != "" {
		if units, err := pb.d.Parser.Units(ctx, ex.File, []byte(src)); err == nil && len(units) > 0 {
			u, ok := taskUnit(units, pb.requests.taskText())
			if !ok {
				u = units[0]
			}
			ex.Symbol = u.Name
		}
	}
	return ex
}

// packageSource is the text of a Go file beside p, for the package clause a
// new file there needs.
func (pb *prefixBuilder) packageSource(p string) string {
	entries, err := pb.d.Work.FS().List(path.Dir(p), 50)
	if err != nil && len(entries) == 0 {
		return ""
	}
	for _, e := range entries {
		if !e.Dir && strings.HasSuffix(e.Path, ".go") && !strings.HasSuffix(e.Path, "_test.go") {
			if data, err := pb.d.Work.FS().ReadFile(e.Path); err == nil {
				return string(data)
			}
		}
	}
	return ""
}

// examplePlaceholder finds the names an example line needs.
var examplePlaceholder = regexp.MustCompile(`\{\{(\w+)\}\}`)

// fill puts the examples' names into a tool's example, escaped for the JSON
// strings they go into. It gives "" when a name the example needs is not
// known: the tool is then described without an example.
func (ex implExamples) fill(s string) string {
	values := map[string]string{"file": ex.File, "symbol": ex.Symbol, "ext": ex.Ext, "dir": ex.Dir,
		"newfile": ex.NewFile, "gate": ex.Gate, "content": ex.Content}
	missing := false
	out := examplePlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := values[m[2:len(m)-2]]
		if !ok || v == "" {
			missing = true
			return ""
		}
		b, _ := json.Marshal(v)
		return strings.Trim(string(b), `"`)
	})
	if missing {
		return ""
	}
	return out
}
