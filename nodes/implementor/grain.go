package implementor

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// The grain of an edit in the text protocol: what the code call asks for.
const (
	grainWhole  = "whole"  // the whole file in one fenced block
	grainUnit   = "unit"   // one function, method or type, whole, spliced by the syntax tree
	grainBlocks = "blocks" // SEARCH/REPLACE blocks
)

const (
	// WholeFileLinesDefault: files up to this many lines are rewritten whole
	// (TestMeasureEditGrain: past it a whole-file reply costs several times
	// the function's).
	WholeFileLinesDefault = 60
	// unitNeighbours units either side of the target are named around it.
	unitNeighbours = 2
)

// grain is how one edit's code is asked for.
type grain struct {
	kind  string
	unit  splice.Unit // grainUnit: the unit shown and asked for; grainAdd: the one the new code goes after
	units []splice.Unit
	add   addition // grainAdd: the declaration asked for
	// why says, for the record, why this grain was chosen.
	why string
}

// chooseGrain picks the grain of an edit of p: the whole file when it is
// new, small, or its targeted edits failed twice (and it fits the reply
// budget); else the unit the action, the task or the last view points at,
// when a parser serves the language; else SEARCH/REPLACE blocks.
func (rb *requestBuilder) chooseGrain(ctx context.Context, act Action, p, old string, exists bool) grain {
	fits := rb.fitsReply(old)
	switch {
	case !exists || act.Action == "write_file":
		return grain{kind: grainWhole, why: "new file"}
	case rb.tree.wholeFile[p] && fits:
		return grain{kind: grainWhole, why: "targeted edits failed twice"}
	case rb.smallWhole(old):
		return grain{kind: grainWhole, why: "small file"}
	}
	units, err := rb.d.Parser.Units(ctx, p, []byte(old))
	if err != nil || len(units) == 0 {
		return grain{kind: grainBlocks, why: "no parser for the file"}
	}
	if a, ok := taskAddition(units, rb.taskText()); ok && (act.Symbol == "" || act.Symbol == a.name || strings.HasSuffix(act.Symbol, "."+a.name)) {
		return grain{kind: grainAdd, unit: a.anchor, units: units, add: a, why: "adds " + a.name + " to " + a.owner.Name}
	}
	if u, ok := rb.pickUnit(units, act.Symbol, p); ok {
		return grain{kind: grainUnit, unit: u, units: units, why: "unit " + u.Name}
	}
	return grain{kind: grainBlocks, units: units, why: "no unit named or in view"}
}

// smallWhole says whether an existing file is small enough to be asked for
// whole (and so shown whole with the request).
func (rb *requestBuilder) smallWhole(old string) bool {
	return strings.Count(old, "\n") <= rb.d.Settings.WholeFileLines && rb.fitsReply(old)
}

// fitsReply says whether the whole file fits the reply budget, with room
// for the change.
func (rb *requestBuilder) fitsReply(old string) bool {
	budget := rb.d.Settings.ReplyTokens
	if budget <= 0 {
		return true
	}
	return llm.CountTokens(old)*6/5+64 <= budget
}

// pickUnit is the unit an edit is about: the one the action names, else
// the one the task names (in this file), else the one around the line the
// model last read or changed.
func (rb *requestBuilder) pickUnit(units []splice.Unit, symbol, p string) (splice.Unit, bool) {
	if u, ok := splice.Named(units, symbol); ok {
		return u, true
	}
	if u, ok := taskUnit(units, rb.taskText()); ok {
		return u, true
	}
	if line, ok := rb.views.focus[p]; ok {
		return splice.At(units, line)
	}
	return splice.Unit{}, false
}

// taskText is everything the task says, to find the names it mentions.
func (rb *requestBuilder) taskText() string {
	t := rb.t
	parts := append([]string{t.Title, t.Instructions, t.Feedback}, t.AcceptanceCriteria...)
	if rb.s.Quick {
		// A quick task is the remit: its title is only the first sentence.
		parts = append(parts, rb.s.Remit)
	}
	return strings.Join(parts, "\n")
}

var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?`)

// taskUnit is the unit of the file the task names: the first one written
// as code (MeanWordLength, mean_word, Stats.Add, `Add`, Add(…), func Add),
// else the first one named inside a sentence, else the first one named at
// all ("Add" opening "Add a comment to Mean" is a word before it is a
// function).
func taskUnit(units []splice.Unit, text string) (splice.Unit, bool) {
	var weak, initial *splice.Unit
	for _, loc := range identifier.FindAllStringIndex(text, -1) {
		w := text[loc[0]:loc[1]]
		if len(w) < 3 {
			continue
		}
		for i, u := range units {
			if u.Name != w && (u.Short() != w || u.Kind == "var" || u.Kind == "const") {
				continue
			}
			if looksLikeCode(text, loc[0], loc[1]) {
				return u, true
			}
			before := strings.TrimRight(text[:loc[0]], " ")
			switch {
			case before == "" || strings.HasSuffix(before, ".") || strings.HasSuffix(before, "\n") || strings.HasSuffix(before, ":"):
				if initial == nil {
					initial = &units[i]
				}
			case weak == nil:
				weak = &units[i]
			}
		}
	}
	if weak != nil {
		return *weak, true
	}
	if initial != nil {
		return *initial, true
	}
	return splice.Unit{}, false
}

// looksLikeCode says whether the word at text[i:j] is written as code.
func looksLikeCode(text string, i, j int) bool {
	w := text[i:j]
	if strings.ContainsAny(w[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") || strings.ContainsAny(w[:1], "_") {
		return true
	}
	if j < len(text) && (text[j] == '(' || text[j] == '`') || i > 0 && text[i-1] == '`' {
		return true
	}
	before := strings.TrimRight(text[:i], " ")
	for _, kw := range []string{"func", "def", "method", "function", "type", "class"} {
		if strings.HasSuffix(before, kw) {
			return true
		}
	}
	return false
}

// renameAllowed says whether the task mentions a name: a unit may take it.
func (rb *requestBuilder) renameAllowed(name string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(rb.taskText())
}

// unitInstruction asks for one unit whole, in words (no placeholder block
// to copy); it is kept in the history.
func unitInstruction(p string, g grain) string {
	u := g.unit
	what := kindWord(u)
	fence := fenceFor(p)
	return fmt.Sprintf("Now write the new version of %s %s (%s lines %d-%d) in one %s%s fenced block, as plain text (not JSON): "+
		"the whole %s with your change made, from its first line to its last, nothing left out or replaced by \"...\", no line numbers. "+
		"To change another %s of %s instead, write that one whole; to add a new one, write it after %s in the same block. Nothing after the closing %s.",
		what, u.Name, p, u.Start, u.End, fence, langOf(p), what, declKinds(p), p, u.Short(), fence)
}

func kindWord(u splice.Unit) string {
	switch u.Kind {
	case "func", "def":
		return "function"
	case "class", "method", "type":
		return u.Kind
	}
	return "declaration"
}

func declKinds(p string) string {
	if splice.Language(p) == "python" {
		return "function, method or class"
	}
	return "function, method or type"
}

// unitView shows the unit asked for, with its neighbours named around it
// (not kept in the history).
func unitView(p, old string, g grain) string {
	lines := strings.Split(strings.TrimRight(old, "\n"), "\n")
	u := g.unit
	var before, after []string
	for i, v := range g.units {
		if v.Name != u.Name {
			continue
		}
		for j := max(0, i-unitNeighbours); j < i; j++ {
			if w := g.units[j]; w.End < u.Start {
				before = append(before, fmt.Sprintf("%s %s (lines %d-%d)", w.Kind, w.Name, w.Start, w.End))
			}
		}
		for j := i + 1; j < len(g.units) && len(after) < unitNeighbours; j++ {
			if w := g.units[j]; w.Start > u.End {
				after = append(after, fmt.Sprintf("%s %s (lines %d-%d)", w.Kind, w.Name, w.Start, w.End))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n%s now has %d lines.", p, len(lines))
	if len(before) > 0 {
		fmt.Fprintf(&b, " Above %s: %s.", u.Short(), strings.Join(before, ", "))
	}
	if len(after) > 0 {
		fmt.Fprintf(&b, " Below it: %s.", strings.Join(after, ", "))
	}
	fence := fenceFor(p)
	fmt.Fprintf(&b, "\n%s %s, lines %d-%d as they are now:\n%s%s\n%s\n%s", kindWord(u), u.Name, u.Start, u.End,
		fence, langOf(p), strings.Join(lines[u.Start-1:min(u.End, len(lines))], "\n"), fence)
	return b.String()
}
