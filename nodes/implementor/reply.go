package implementor

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// codeCandidate is one code reply read into a change.
type codeCandidate struct {
	change  change
	note    string // what the model should know about how it was read
	problem string // why it cannot be used ("" when it can)
	resp    llm.Response
}

// readCode reads a code reply at its grain. SEARCH/REPLACE blocks are taken
// at any grain; a whole-file reply that holds only some units of a file a
// parser serves is spliced by unit rather than cutting the file.
func (cd *coder) readCode(ctx context.Context, resp llm.Response, p string, g grain, old string) codeCandidate {
	switch resp.Stop() {
	case llm.StopLength:
		return codeCandidate{problem: fmt.Sprintf("the reply was cut off at %d tokens (the reply limit)", resp.Usage.CompletionTokens)}
	case llm.StopLooping:
		return codeCandidate{problem: "the reply kept repeating the same lines and was stopped; write only the code asked for, once"}
	}
	if (g.kind == grainUnit || g.kind == grainAdd) && !hasBlockMarkers(resp.Content) {
		return cd.readUnit(ctx, resp.Content, p, g, old)
	}
	edits, content, problem := parseCode(resp, p, g.kind == grainWhole, old)
	if problem != "" {
		return codeCandidate{problem: problem}
	}
	if edits != nil {
		return codeCandidate{change: change{edits: edits}}
	}
	if old != "" && content != old && splice.Language(p) != "" && (partOfFile(p, content, old) || cd.dropsUsed(ctx, p, content, old)) {
		r, err := cd.d.Parser.Rewrite(ctx, splice.Request{Path: p, Src: old, Code: content, Rename: cd.requests.renameAllowed})
		if err == nil {
			return codeCandidate{change: change{files: map[string]string{p: r.Content}, lines: map[string]int{p: r.Line}},
				note: fmt.Sprintf("(your block held only part of %s: %s put in place, the rest of the file kept)\n", p, strings.Join(append(r.Replaced, r.Added...), ", "))}
		}
	}
	note := ""
	if trimmed, n := cd.dropLeadingProse(ctx, p, content); n > 0 {
		content, note = trimmed, fmt.Sprintf("(lemmings dropped the %d lines of prose before your code)\n", n)
	}
	return codeCandidate{change: change{files: map[string]string{p: content}, lines: map[string]int{p: firstDifferentLine(old, content)}}, note: note}
}

// codeStart is a line that can only open code: a declaration, an import, a
// package clause, a decorator.
var codeStart = regexp.MustCompile(`^(?:package |import |from \S+ import |def |async def |class |func |type |const |var |@\w|#!|"""|//|/\*|use |fn |pub |struct |enum |#include|public |private )`)

// dropLeadingProse takes off the lines of prose a small coder writes before
// the code in its block (Qwen2.5-Coder-0.5B copied the exercise's markdown
// instructions there): when the block does not parse and does from its first
// line of code on, that is the code. It gives the code and how many lines it
// dropped (0: the block stays as it was).
func (cd *coder) dropLeadingProse(ctx context.Context, p, content string) (string, int) {
	if splice.Language(p) == "" || cd.tree.parses(ctx, p, []byte(content)) == nil {
		return content, 0
	}
	lines := strings.Split(content, "\n")
	for i, line := range lines {
		if i == 0 || !codeStart.MatchString(line) {
			continue
		}
		rest := strings.Join(lines[i:], "\n")
		if cd.tree.parses(ctx, p, []byte(rest)) == nil {
			return rest, i
		}
		break
	}
	return content, 0
}

// partOfFile says whether a whole-file reply is only a piece of the file: Go
// code without a package clause, or under half the file's lines (a weak
// model's "whole file" of ten lines for a file of a hundred).
func partOfFile(p, content, old string) bool {
	if splice.Language(p) == "go" {
		for _, line := range strings.Split(content, "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "//") {
				if !strings.HasPrefix(t, "package ") {
					return true
				}
				break
			}
		}
	}
	return strings.Count(content, "\n")*2 < strings.Count(old, "\n")
}

// dropsUsed says whether a whole-file reply leaves out a top-level
// declaration of the file that it still uses: Qwen2.5-Coder-1.5B, asked to
// add UniqueWords, wrote the file with UniqueWords and the functions calling
// Words, but not Words, in every draw. A reply that means to delete a
// declaration does not call it, so splicing such a reply by unit keeps what
// it forgot and changes nothing it meant.
func (cd *coder) dropsUsed(ctx context.Context, p, content, old string) bool {
	was, err := cd.d.Parser.Units(ctx, p, []byte(old))
	if err != nil {
		return false
	}
	now, err := cd.d.Parser.Units(ctx, p, []byte(content))
	if err != nil {
		return false
	}
	declared := map[string]bool{}
	for _, u := range now {
		for _, n := range append([]string{u.Name}, u.Names...) {
			declared[n] = true
		}
	}
	for _, u := range was {
		if u.Kind == "method" || strings.Contains(u.Name, ".") || declared[u.Name] {
			continue
		}
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(u.Name) + `\b`).MatchString(content) {
			return true
		}
	}
	return false
}

// readUnit reads a unit reply: the fenced block (or the whole reply when a
// weak model left the fence out), spliced into the file by name.
func (cd *coder) readUnit(ctx context.Context, reply, p string, g grain, old string) codeCandidate {
	code, ok := fencedBlock(reply, fenceFor(p))
	if !ok {
		code = reply
	}
	if strings.TrimSpace(code) == "" {
		return codeCandidate{problem: "the code block is empty"}
	}
	lines := strings.Split(old, "\n")
	oldUnit := strings.Join(lines[g.unit.Start-1:min(g.unit.End, len(lines))], "\n")
	if m := lazyElision.FindString(code); m != "" && !lazyElision.MatchString(oldUnit) {
		return codeCandidate{problem: fmt.Sprintf("the %s has a part left out (%q): write every line of it", kindWord(g.unit), strings.TrimSpace(m))}
	}
	req := splice.Request{Path: p, Src: old, Target: g.unit.Name, Code: code, Rename: cd.requests.renameAllowed, Others: cd.requests.renameAllowed}
	if g.kind == grainAdd {
		req.Add, req.Owner, req.Others = true, g.add.owner.Name, cd.requests.addAllowed(g)
	}
	r, err := cd.d.Parser.Rewrite(ctx, req)
	if err != nil {
		return codeCandidate{problem: err.Error()}
	}
	var note string
	switch {
	case r.Whole:
		note = fmt.Sprintf("(your block was the whole of %s: it replaced the file)\n", p)
	case r.Renamed != "":
		note = fmt.Sprintf("(renamed %s)\n", r.Renamed)
	}
	if len(r.Added) > 0 {
		note += fmt.Sprintf("(added %s after %s)\n", strings.Join(r.Added, ", "), g.unit.Name)
	}
	said := fmt.Sprintf("%s: rewrote %s (%d lines now)", p, strings.Join(r.Replaced, ", "), strings.Count(r.Content, "\n"))
	if r.Whole {
		said = ""
	}
	return codeCandidate{change: change{files: map[string]string{p: r.Content}, lines: map[string]int{p: r.Line}, said: map[string]string{p: said}}, note: note}
}
