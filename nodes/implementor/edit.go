package implementor

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/invopop/jsonschema"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// implTextAction is an action of the text protocol: the JSON names what to
// do and carries no code; an edit or write_file is followed by a second call,
// without a JSON format, in which the model writes the code as plain text.
type implTextAction struct {
	actionHead
	actionTail
}

// JSONSchemaExtend sets the enum of "action" to the tools the text protocol
// offers (llm.SchemaFor calls it).
func (implTextAction) JSONSchemaExtend(s *jsonschema.Schema) { setActionEnum(s, toolNames(true)) }

func (a implTextAction) action() Action {
	return Action{actionHead: a.actionHead, actionTail: a.actionTail}
}

// codeExchange is one code call as the history keeps it: the request for
// code (without the transient view of the file), the model's final reply,
// and what became of it.
type codeExchange struct {
	instruction, reply, result string
	// land is the landing of the code kept (not landed when none was).
	land landing
}

// fenceFor is the fence a file's content is written in: four backticks for
// Markdown, which has fences of its own.
func fenceFor(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return "````"
	}
	return "```"
}

func langOf(p string) string {
	switch ext := strings.TrimPrefix(strings.ToLower(path.Ext(p)), "."); ext {
	case "py":
		return "python"
	case "js", "mjs", "cjs":
		return "javascript"
	case "ts":
		return "typescript"
	case "rs":
		return "rust"
	case "md":
		return "markdown"
	case "yml":
		return "yaml"
	default:
		return ext
	}
}

// codeInstruction asks for the code; it is kept in the history. It says
// the form in words, with no example block: a small coder returns a fenced
// placeholder ("<every line of the file>") as its code (Qwen2.5-Coder-1.5B
// in the full pipeline, docs/testing-real-models.md).
func codeInstruction(p string, whole, exists bool, lines int) string {
	fence := fenceFor(p)
	if whole {
		what := "the new file " + p
		if exists {
			what = fmt.Sprintf("the complete new content of %s (%d lines now)", p, lines)
		}
		return fmt.Sprintf("Now write %s in one %s%s fenced block, as plain text (not JSON): "+
			"the whole file with your change made, every line, nothing left out or replaced by \"...\", no line numbers. Nothing after the closing %s.",
			what, fence, langOf(p), fence)
	}
	return fmt.Sprintf("Now write your change to %s as SEARCH/REPLACE blocks, as plain text (not JSON): for each block, a line <<<<<<< SEARCH, "+
		"then two to five lines copied exactly from the file as it is now (without line numbers), then a line =======, then those lines as they should be, then a line >>>>>>> REPLACE. "+
		"Use several small blocks rather than one large one.", p)
}

// directRequest asks a direct attempt's code call for the file or the unit,
// after the view of it: plain words, no example block to copy. The first
// round asks for code that does what the remit says (the words Qwen2.5-Coder
// answered best); a fix round for the fix.
func directRequest(p string, g grain, exists, fix bool) string {
	fence := fenceFor(p) + langOf(p)
	what := "that does this"
	if fix {
		what = "with the fix"
	}
	switch {
	case g.kind == grainAdd:
		return addRequest(p, g, fix)
	case g.kind == grainUnit:
		return fmt.Sprintf("Write the new %s %s %s, whole, in one %s fenced block. To add a new %s, write it after %s in the same block.",
			kindWord(g.unit), g.unit.Name, what, fence, declKinds(p), g.unit.Name)
	case !exists:
		return fmt.Sprintf("Write the new file %s %s, complete, in one %s fenced block.", p, what, fence)
	}
	return fmt.Sprintf("Write the complete new %s %s, in one %s fenced block.", p, what, fence)
}

// diagnoseTokens is room for the sentence a diagnose request asks before
// the code.
const diagnoseTokens = 120

// diagnoseRequest asks again after code that left the file as it was: the
// cause of the failure in one sentence, then the code. Asked the same
// request, a small coder at temperature 0 writes the same code; made to say
// what is wrong first, it writes the fix (Aider's replies open with that
// sentence; Qwen2.5-Coder-1.5B copied the failing file back unchanged at
// lemmings' bare request, docs/eval.md).
func diagnoseRequest(p string, g grain, exists bool) string {
	return fmt.Sprintf("First say in one sentence what in %s makes it fail. Then write %s with the fix, in one %s fenced block.", p, codeAsked(p, g, exists), fenceFor(p)+langOf(p))
}

// codeAsked names the code a request after some words asks for: the whole
// file, the unit, or the new file.
func codeAsked(p string, g grain, exists bool) string {
	switch {
	case g.kind == grainAdd:
		return fmt.Sprintf("the new %s %s of %s alone,", g.add.kind, g.add.name, g.add.owner.Name)
	case g.kind == grainUnit:
		return fmt.Sprintf("the new %s %s, whole,", kindWord(g.unit), g.unit.Name)
	case !exists:
		return "the new file " + p + ", complete,"
	}
	return "the complete new " + p
}

// planTokens is room for the short plan a planned draw writes before the
// code (docs/implementor.md has what small coders wrote).
const planTokens = 250

// planOpening starts a planned draw's reply as Aider's example reply starts,
// so the plan is a short numbered list and not a page of headings.
const planOpening = "Ok, I will:\n\n1."

// planRequest asks for a short plan, then the code: a draw of another kind
// than the bare request, for a small coder that writes the same wrong code
// to it at every temperature.
func planRequest(p string, g grain, exists bool) string {
	return fmt.Sprintf("Say briefly what you will do, then write %s in one %s fenced block.", codeAsked(p, g, exists), fenceFor(p)+langOf(p))
}

// numberedLine is a line of a numbered view ("  12| code", ">  7| code").
var numberedLine = regexp.MustCompile(`^\s*>?\s*\d+\| `)

// directNote is what a direct attempt's fix round repeats of the last
// landing: what lemmings said and the checks found, without the numbered
// view of the file (the request shows it plainly, and numbered lines in
// the prompt get copied into code).
func directNote(result string) string {
	var keep []string
	for _, line := range strings.Split(result, "\n") {
		if numberedLine.MatchString(line) || strings.HasSuffix(line, " now reads:") || strings.HasPrefix(line, "… (") {
			continue
		}
		if n := len(keep); n > 0 && keep[n-1] == line {
			continue // a separator that framed the numbered lines left out
		}
		keep = append(keep, line)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// lazyElision spots a whole file with parts left out ("// ... rest of the
// code"), which would delete them.
var lazyElision = regexp.MustCompile(`(?im)^\s*(//|#|/\*|<!--|--|;)\s*(\.\.\.|…).*$|^\s*(//|#)\s*(rest of|remaining|existing|unchanged|other) (the )?(code|file|functions?|methods?|lines?|content)`)

// parseCode reads the code reply: SEARCH/REPLACE blocks wherever they are
// written, else (whole-file mode) the one fenced block. problem says why a
// reply cannot be used.
func parseCode(resp llm.Response, p string, whole bool, old string) (edits []workspace.Edit, content, problem string) {
	reply := resp.Content
	if resp.DoneReason == "length" {
		return nil, "", fmt.Sprintf("the reply was cut off at %d tokens (the reply limit)", resp.Usage.CompletionTokens)
	}
	if hasBlockMarkers(reply) {
		edits, err := workspace.ParseEditBlocks(reply)
		var pe *workspace.ParseError
		if errors.As(err, &pe) && strings.HasPrefix(pe.Problem, "no file path") {
			edits, err = workspace.ParseEditBlocks(p + "\n" + reply)
		}
		if err != nil {
			return nil, "", "the SEARCH/REPLACE blocks could not be read: " + err.Error()
		}
		if len(edits) == 0 {
			return nil, "", "no SEARCH/REPLACE block was found"
		}
		return edits, "", ""
	}
	if !whole {
		// A small coder asked for blocks often writes the whole file instead
		// (Qwen-1.5B, twice in a row on a 72-line file): taken as the whole
		// file when it keeps most of the file's lines, never a fragment.
		if code, ok := fencedBlock(reply, fenceFor(p)); ok && old != "" && keepsMostLines(code, old) && lazyElision.FindString(code) == "" {
			return nil, code, ""
		}
		return nil, "", "no SEARCH/REPLACE block was found: write <<<<<<< SEARCH, the old lines, =======, the new lines, >>>>>>> REPLACE"
	}
	code, ok := fencedBlock(reply, fenceFor(p))
	if !ok {
		return nil, "", "the file was not in a fenced code block: put the whole file between a line " + fenceFor(p) + langOf(p) + " and a line " + fenceFor(p)
	}
	if strings.TrimSpace(code) == "" {
		return nil, "", "the code block is empty"
	}
	if m := lazyElision.FindString(code); m != "" && !lazyElision.MatchString(old) {
		return nil, "", fmt.Sprintf("the file has a part left out (%q): write every line of the file", strings.TrimSpace(m))
	}
	return nil, code, ""
}

// keepsMostLines says whether code holds at least four in five of old's
// non-blank lines: the whole file with a change, not a piece of it.
func keepsMostLines(code, old string) bool {
	have := map[string]bool{}
	for _, line := range strings.Split(code, "\n") {
		have[strings.TrimSpace(line)] = true
	}
	kept, total := 0, 0
	for _, line := range strings.Split(old, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			total++
			if have[line] {
				kept++
			}
		}
	}
	return total > 0 && kept*5 >= total*4
}

var blockMarker = regexp.MustCompile(`(?m)^\s*<{5,9}\s*(?i:SEARCH)\s*$`)

func hasBlockMarkers(s string) bool { return blockMarker.MatchString(s) }

var fenceOpen = regexp.MustCompile("^\\s*(`{3,}|~{3,})\\s*([^`]*)$")

// fencedBlock returns the longest fenced block of reply. A block still open
// at the end of a reply that stopped normally is taken to the end (models
// drop the closing fence); the caller has refused replies cut at the limit.
// The preferred fence (four backticks for Markdown) is tried first so inner
// fences stay part of the file.
func fencedBlock(reply, preferred string) (string, bool) {
	lines := strings.Split(strings.ReplaceAll(reply, "\r\n", "\n"), "\n")
	best, found := "", false
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		fence := m[1]
		if len(preferred) > 3 && len(fence) < len(preferred) && strings.Contains(reply, preferred) {
			continue
		}
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, fence[:1]) && strings.Trim(t, fence[:1]) == "" && len(t) >= len(fence) {
				break
			}
		}
		body := strings.Join(lines[i+1:min(j, len(lines))], "\n")
		if j >= len(lines) {
			body = strings.TrimRight(body, "\n ")
		}
		if !found || len(body) > len(best) {
			best, found = body, true
		}
		i = j
	}
	if !found {
		return "", false
	}
	return best + "\n", true
}
