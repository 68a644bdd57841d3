package nodes

// A remit written as a list ("(1) fix …, (2) add …, (3) add …", or one item
// per line) is the user's plan: one task per item, planned by lemmings
// without a model call, each placed in its files as a quick remit is
// (locate.go). A small planner collapses such a list into one task of its
// own invention (docs/testing-real-models.md, the full pipeline on
// Qwen-1.5B); the list's tasks are the user's words, so the planner keeps
// them as they are (operator tasks), and QA and the Assessor still judge
// each.

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Bounds of a list lemmings plans itself: past them the ScopeAgent cuts it.
const (
	listMinItems = 2
	listMaxItems = 10
)

var (
	// listLine is an item opening a line: "- x", "* x", "1. x", "2) x". It
	// is the one list detector: the remit's shape counts its lines
	// (remitList) and lineItems reads them, so the two cannot disagree. A
	// number of three digits opens no item ("2024. was …"): a list lemmings
	// plans has at most listMaxItems.
	listLine = regexp.MustCompile(`^\s*(?:[-*•]|\d{1,2}[.)])\s+(\S.*)$`)
	// inlineMarker is a number in parentheses inside a sentence: "(1) x".
	inlineMarker = regexp.MustCompile(`(?:^|[\s:;,.])\((\d{1,2})\)\s+`)
	// checkItem is an item that runs a check: "run go test", "check the build".
	checkItem = regexp.MustCompile(`(?i)^(?:and\s+|then\s+)?(?:run|check|verify|ensure)\b.{0,40}\b(?:tests?|build|vet|lint|linters?|gates?)\b\W*$`)
)

// remitItems reads a remit written as a list: what stands before the list
// (the intro, said of every item) and the items. It finds none in a remit
// that is not a list of listMinItems to listMaxItems items, and leaves out
// an item that only says how the work is checked ("make go test pass").
func remitItems(remit string) (intro string, items []string) {
	intro, items = lineItems(remit)
	if len(items) < listMinItems {
		intro, items = inlineItems(remit)
	}
	var work []string
	for _, it := range items {
		if checkOnly(it) {
			intro = strings.TrimSpace(intro + " " + it)
			continue
		}
		work = append(work, it)
	}
	if len(work) < listMinItems || len(work) > listMaxItems {
		return "", nil
	}
	return intro, work
}

// remitList counts the lines of remit that open a list item: each is a
// change asked for (readRemit).
func remitList(remit string) int {
	n := 0
	for _, line := range strings.Split(remit, "\n") {
		if listLine.MatchString(line) {
			n++
		}
	}
	return n
}

// lineItems finds one item per line; a line that is not an item continues
// the item above it, or is the intro before the first.
func lineItems(remit string) (string, []string) {
	var intro []string
	var items []string
	for _, line := range strings.Split(remit, "\n") {
		if m := listLine.FindStringSubmatch(line); m != nil {
			items = append(items, strings.TrimSpace(m[1]))
			continue
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case len(items) == 0:
			intro = append(intro, line)
		default:
			items[len(items)-1] += " " + line
		}
	}
	return strings.Join(intro, " "), items
}

// inlineItems finds "(1) … (2) … (3) …" in running text: the markers must
// count 1, 2, 3 … in order, so a stray "(2)" in prose is not a list.
func inlineItems(remit string) (string, []string) {
	text := strings.Join(strings.Fields(remit), " ")
	type marker struct{ at, body int } // where "(n)" starts, where its item's text starts
	var marks []marker
	for _, loc := range inlineMarker.FindAllStringSubmatchIndex(text, -1) {
		if n, _ := strconv.Atoi(text[loc[2]:loc[3]]); n == len(marks)+1 {
			marks = append(marks, marker{at: loc[2] - 1, body: loc[1]})
		}
	}
	if len(marks) < listMinItems {
		return "", nil
	}
	var items []string
	for i, m := range marks {
		end := len(text)
		if i+1 < len(marks) {
			end = marks[i+1].at
		}
		items = append(items, strings.TrimSpace(text[m.body:end]))
	}
	return strings.TrimSpace(text[:marks[0].at]), items
}

// checkOnly says whether an item only names the check of the work ("run go
// test", "make the tests pass"), not a change.
func checkOnly(item string) bool {
	return len(strings.Fields(item)) <= 8 && (gatePhrase.MatchString(item) || checkItem.MatchString(item)) &&
		readRemit(item).Behaviours <= 1 && !strings.ContainsAny(item, "(`\"")
}

// listPlan is the plan of a list remit: one milestone, a task per item,
// each placed by lemmings. Nil when the remit is not such a list.
func (d quickPath) listPlan(ctx context.Context, remit string) *runstate.Plan {
	intro, items := remitItems(remit)
	if len(items) == 0 {
		return nil
	}
	m := runstate.PlanMilestone{Goal: textutil.ClipTrimmed(textutil.FirstNonEmpty(intro, remit), 300)}
	seen := map[string]bool{}
	for i, item := range items {
		t := runstate.PlannedTask{Title: quickTitle(item)}
		if seen[strings.ToLower(t.Title)] {
			t.Title = textutil.ClipTrimmed(fmt.Sprintf("%s (item %d)", t.Title, i+1), 120)
		}
		seen[strings.ToLower(t.Title)] = true
		t.Instructions = fmt.Sprintf("Item %d of %d of the remit: %s", i+1, len(items), item)
		if intro != "" {
			t.Instructions += "\nThe remit says of every item: " + intro
		}
		// The item's own words first; the intro's files when it names none.
		p := d.place(ctx, item+"\n"+intro)
		if p.How != "" {
			events.Emit(ctx, events.Placed{Change: p.Change, Show: p.Show, How: p.How, Tests: p.Tests})
		}
		if p.placed() {
			t.TargetFiles = append(t.TargetFiles, p.Change...)
			t.Placed, t.Tests = true, p.Tests
		}
		for _, f := range p.Show {
			if len(t.TargetFiles) < 2*quickMaxFiles {
				t.TargetFiles = appendNew(t.TargetFiles, f)
			}
		}
		t.AcceptanceCriteria = d.quickCriteria(item, t.TargetFiles)
		m.Tasks = append(m.Tasks, t)
	}
	return &runstate.Plan{Milestones: []runstate.PlanMilestone{m}}
}
