package nodes

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// implExamples are the names the worked examples of the prompt use: the
// task's own first target file and the unit it is about, or neutral names
// when the task names none. A weak model copies examples literally, so they
// must never name a file of another repository.
type implExamples struct {
	File, Symbol, Lang, Fence, Ext, Dir, NewFile string
	// UnitHead and UnitTail frame the worked example of a unit reply.
	UnitHead, UnitTail, BodyIndent string
	// SearchText and ReplaceText are one neutral line each, ending in a
	// newline, for the SEARCH/REPLACE example.
	SearchText, ReplaceText string
	// Content is a new file's first line, for write_file's JSON example.
	Content string
}

var goPackageClause = regexp.MustCompile(`(?m)^package\s+(\w+)`)

// examples builds the worked examples' names from the task's target files.
func (l *implLoop) examples(ctx context.Context) implExamples {
	ex := implExamples{File: "example.go", Symbol: "Example"}
	var src string
	for _, f := range l.t.TargetFiles {
		if data, err := l.d.Work.FS().ReadFile(f); err == nil {
			ex.File, src = f, string(data)
			break
		}
		if ex.File == "example.go" {
			ex.File = f
		}
	}
	ex.Lang, ex.Fence, ex.Ext = langOf(ex.File), fenceFor(ex.File), path.Ext(ex.File)
	if ex.Dir = path.Dir(ex.File); ex.Dir == "" {
		ex.Dir = "."
	}
	base := "helpers" + ex.Ext
	if ex.Dir == "." {
		ex.NewFile = base
	} else {
		ex.NewFile = ex.Dir + "/" + base
	}
	lang := splice.Language(ex.File)
	ex.BodyIndent = "    "
	ex.SearchText, ex.ReplaceText = "count = 0\n", "count = 1\n"
	switch lang {
	case "go":
		ex.BodyIndent = "\t"
		ex.SearchText, ex.ReplaceText = "\tcount := 0\n", "\tcount := 1\n"
		pkg := "main"
		if m := goPackageClause.FindStringSubmatch(src); m != nil {
			pkg = m[1]
		}
		ex.Content = "package " + pkg + "\n"
	case "python":
		ex.SearchText, ex.ReplaceText = "    count = 0\n", "    count = 1\n"
		ex.Content = "\"\"\"Helpers.\"\"\"\n"
	}
	if src != "" && lang != "" {
		if units, err := l.parser().Units(ctx, ex.File, []byte(src)); err == nil && len(units) > 0 {
			u, ok := taskUnit(units, l.taskText())
			if !ok {
				u = units[0]
			}
			lines := strings.Split(src, "\n")
			ex.Symbol = u.Name
			ex.UnitHead = strings.TrimRight(lines[u.Decl-1], " \t")
			if lang == "go" && strings.HasSuffix(ex.UnitHead, "{") {
				ex.UnitTail = "}"
			}
			if lang == "python" {
				ex.UnitHead = strings.TrimLeft(ex.UnitHead, " \t")
			}
		}
	}
	if ex.UnitHead == "" {
		switch lang {
		case "python":
			ex.UnitHead = "def " + strings.ToLower(ex.Symbol) + "():"
			ex.Symbol = strings.ToLower(ex.Symbol)
		default:
			ex.UnitHead, ex.UnitTail = "func "+ex.Symbol+"() {", "}"
		}
	}
	return ex
}

// fill puts the examples' names into a tool's description: the values go
// into JSON strings, escaped.
func (ex implExamples) fill(s string) string {
	esc := func(v string) string {
		b, _ := json.Marshal(v)
		return strings.Trim(string(b), `"`)
	}
	return strings.NewReplacer("{{file}}", esc(ex.File), "{{symbol}}", esc(ex.Symbol), "{{ext}}", esc(ex.Ext),
		"{{dir}}", esc(ex.Dir), "{{newfile}}", esc(ex.NewFile), "{{search}}", esc(ex.SearchText),
		"{{replace}}", esc(ex.ReplaceText), "{{content}}", esc(ex.Content)).Replace(s)
}
