package implementor

import (
	"context"
	"embed"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Tool output caps keep one result from flooding the local model's context.
const (
	// readWindow is how many lines read_file shows at once; a file up to
	// readWhole lines is shown whole.
	readWindow = 150
	readWhole  = 200
	// targetFileLines of each target file go into the prompt up front.
	targetFileLines = 200
	maxListing      = 300
	maxGrepHits     = 60
	maxSearchHits   = 6
)

// implTool is one action of the Implementor, defined once: the schema's
// enum, the prompt's list of actions, the dispatch and the advice on a
// repeat all come from implTools.
type implTool struct {
	name string
	// inText and inJSON: the edit protocols that offer it.
	inText, inJSON bool
	// params are the fields of Action (and implTextAction) it reads.
	params []string
	// tool makes the tool with what it needs of the attempt (tool.go);
	// nil for the actions that end the attempt.
	tool func(l *implLoop) tool
	// end is an action that may end the attempt (finish, blocked, ask): it
	// returns the attempt's result, or nil when the loop goes on.
	end func(l *implLoop, ctx context.Context, c *ToolCall) *runstate.ImplResult
	// writes: the action carries code in the JSON protocol.
	writes bool
	// codeAfter: in the text protocol the code is asked for in a second,
	// plain-text call (coder.codeEdit) instead of running the tool.
	codeAfter bool
	// onRepeat is the advice when the same action brings the same result
	// again.
	onRepeat string
}

// implTools are the Implementor's actions in the order the prompt lists them.
// Each one's description is tools/<name>.md (tools/<name>.text.md for the
// text protocol when that differs): the first line says what it does, the
// second is an example reply.
var implTools = []implTool{
	{name: "read_file", inText: true, inJSON: true, params: []string{"path", "start_line", "end_line", "symbol"},
		tool: func(l *implLoop) tool { return readTool{fs: l.d.Work.FS(), parser: l.d.Parser, focus: l.views.focus} }, onRepeat: haveIt},
	{name: "list_files", inText: true, inJSON: true, params: []string{"path"},
		tool: func(l *implLoop) tool { return listTool{fs: l.d.Work.FS()} }, onRepeat: haveIt},
	{name: "grep", inText: true, inJSON: true, params: []string{"pattern", "path"},
		tool: func(l *implLoop) tool { return grepTool{fs: l.d.Work.FS()} }, onRepeat: searchElse},
	{name: "rag_search", inText: true, inJSON: true, params: []string{"query"},
		tool: func(l *implLoop) tool { return searchTool{search: l.d.Search} }, onRepeat: searchElse},
	{name: "edit", inText: true, inJSON: true, params: []string{"path", "symbol", "edits"}, writes: true, codeAfter: true,
		tool: func(l *implLoop) tool { return editTool{land: l.tree.land} }, onRepeat: editAgain},
	{name: "edit_blocks", inJSON: true, params: []string{"blocks"}, writes: true,
		tool: func(l *implLoop) tool { return blocksTool{land: l.tree.land} }, onRepeat: editAgain},
	{name: "write_file", inText: true, inJSON: true, params: []string{"path", "content"}, writes: true, codeAfter: true,
		tool: func(l *implLoop) tool { return writeTool{fs: l.d.Work.FS(), land: l.tree.land} }, onRepeat: editAgain},
	{name: "run_gate", inText: true, inJSON: true, params: []string{"gate"},
		tool: func(l *implLoop) tool {
			return gateTool{gates: l.d.Gates, box: l.d.Sandbox, dir: l.d.Work.Dir(), outputBytes: l.d.Settings.GateOutputBytes,
				heard: func(ctx context.Context, r workspace.GateResult) { l.d.emitGate(ctx, l.t, "run_gate", r) }}
		},
		onRepeat: "its result will not change until you change the code. Edit the code the output points at."},
	{name: "finish", inText: true, inJSON: true, params: []string{"summary"},
		end: func(l *implLoop, ctx context.Context, c *ToolCall) *runstate.ImplResult { return l.finish(ctx, c) }},
	{name: "blocked", inText: true, inJSON: true, params: []string{"summary"},
		end: func(_ *implLoop, _ context.Context, c *ToolCall) *runstate.ImplResult {
			return &runstate.ImplResult{Status: runstate.ImplBlocked, Actions: c.N, Summary: textutil.FirstNonEmpty(c.act.Summary, c.act.Thought)}
		}},
	{name: "ask", inText: true, inJSON: true, params: []string{"question"},
		end: func(_ *implLoop, _ context.Context, c *ToolCall) *runstate.ImplResult {
			return &runstate.ImplResult{Status: runstate.ImplQuestion, Actions: c.N, Summary: "the implementor asked a question", Question: textutil.FirstNonEmpty(c.act.Question, c.act.Summary)}
		}},
}

// Advice on a repeated action, shared by tools of one kind.
const (
	haveIt     = "you have that content above. Make your change now, or read another part (start_line) or another file."
	searchElse = "search for something else, or read the file you need."
	editAgain  = "read the file again and change what it says now, or take another approach."
)

// toolNamed returns the tool of an action name.
func toolNamed(name string) (implTool, bool) {
	for _, t := range implTools {
		if t.name == name {
			return t, true
		}
	}
	return implTool{}, false
}

// toolNames lists the actions a protocol offers: the schema's enum.
func toolNames(text bool) []string {
	var out []string
	for _, t := range implTools {
		if t.offered(text) {
			out = append(out, t.name)
		}
	}
	return out
}

func (t implTool) offered(text bool) bool { return (text && t.inText) || (!text && t.inJSON) }

//go:embed tools/*.md
var toolDocs embed.FS

// toolDoc is one line of the prompt's list of actions.
type toolDoc struct{ Name, Description, Example string }

// toolDocsFor lists the actions a protocol offers as the prompt describes
// them, their examples naming the task's files (ex).
func toolDocsFor(text bool, ex implExamples) ([]toolDoc, error) {
	var out []toolDoc
	for _, t := range implTools {
		if !t.offered(text) {
			continue
		}
		data, err := toolDocs.ReadFile("tools/" + t.name + ".text.md")
		if !text || err != nil {
			data, err = toolDocs.ReadFile("tools/" + t.name + ".md")
		}
		if err != nil {
			return nil, fmt.Errorf("implementor tool %s: %w", t.name, err)
		}
		desc, example, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		out = append(out, toolDoc{Name: t.name, Description: desc, Example: strings.TrimSpace(ex.fill(example))})
	}
	return out, nil
}

// execute runs one implementor action that works in the tree.
func (l *implLoop) execute(ctx context.Context, a Action) string {
	if t, ok := toolNamed(a.Action); ok && t.tool != nil {
		return t.tool(l).run(ctx, a)
	}
	return fmt.Sprintf("error: unknown action %q", a.Action)
}
