// Command house measures how the module's house is kept (issue 45): the
// widest method sets, the functions and files that grew too long, the
// imports that run back up between the levels (floors.go says what they
// are and how a package's level is read), the packages a reader of runs
// links, the alias re-exports left, and a maintainer's first-guess test on
// eight behaviours (behaviours.go, against docs/architecture.md's "Where to
// find it"). It type-checks the non-test files with the export data `go
// list -export` leaves, so it needs only the go command.
//
//	go run ./scripts/house        # the numbers, with what each counts
//	go run ./scripts/house -v     # and every type over the goal, every floor
//	make house
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// The goals issue 45 set.
const (
	goalMethods    = 30
	goalFuncLines  = 100
	goalFileLines  = 500
	goalUpArrows   = 5
	goalLinkedRead = 8
	reader         = "inspect" // the package that reads runs
)

func main() {
	verbose := flag.Bool("v", false, "list the floors and every type over the goal")
	doc := flag.String("doc", "docs/architecture.md", "the doc whose \"Where to find it\" names the first guesses")
	flag.Parse()
	h, err := load()
	if err == nil {
		err = report(os.Stdout, h, *doc, *verbose)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "house:", err)
		os.Exit(1)
	}
}

func report(w io.Writer, h *house, doc string, verbose bool) error {
	widths := h.methodSets()
	over := 0
	for _, t := range widths {
		if t.methods > goalMethods {
			over++
		}
	}
	fmt.Fprintf(w, "== widest method sets (of *T, promoted methods included; goal <= %d): %d types over\n", goalMethods, over)
	for i, t := range widths {
		if i >= 5 && !(verbose && t.methods > goalMethods) {
			break
		}
		fmt.Fprintf(w, "  %3d %s\n", t.methods, t.name)
	}

	longs := h.longFunctions(goalFuncLines)
	tables := 0
	for _, l := range longs {
		if l.table {
			tables++
		}
	}
	fmt.Fprintf(w, "== functions over %d lines (non-test): %d, %d of them tables\n", goalFuncLines, len(longs)-tables, tables)
	for _, l := range longs {
		note := ""
		if l.table {
			note = " (table)"
		}
		fmt.Fprintf(w, "  %3d %s%s\n", l.lines, l.name, note)
	}

	if err := reportFiles(w, h); err != nil {
		return err
	}
	if err := reportFloors(w, h, verbose); err != nil {
		return err
	}
	linked, err := h.linkedBy(reader)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== packages of the module %s links (go list -deps; goal <= %d): %d\n  %s\n", reader, goalLinkedRead, len(linked), strings.Join(linked, " "))

	aliases := h.aliases()
	fmt.Fprintf(w, "== alias re-exports (an exported name declared as another name of the module): %d\n", len(aliases))
	for _, a := range aliases {
		fmt.Fprintf(w, "  %s\n", a)
	}
	return reportGuesses(w, h, doc)
}

func reportFiles(w io.Writer, h *house) error {
	big, err := h.bigFiles(goalFileLines, false)
	if err != nil {
		return err
	}
	bigTests, err := h.bigFiles(goalFileLines, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== Go files over %d lines: %d (and %d test files)\n", goalFileLines, len(big), len(bigTests))
	for _, f := range big {
		fmt.Fprintf(w, "  %4d %s\n", f.lines, f.file)
	}
	return nil
}

func reportFloors(w io.Writer, h *house, verbose bool) error {
	all, up, err := h.arrows()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== arrows between the module's packages: %d; running back up a floor (goal <= %d): %d\n", len(all), goalUpArrows, len(up))
	for _, a := range up {
		fmt.Fprintf(w, "  %s (%s) → %s (%s)\n", a.from, floors[a.fromFloor].name, a.to, floors[a.toFloor].name)
	}
	if !verbose {
		return nil
	}
	plan, err := h.floorPlan()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "   floors, lowest first:")
	for i, ps := range plan {
		fmt.Fprintf(w, "   %d %s (%s): %s\n", i, floors[i].name, floors[i].what, strings.Join(ps, " "))
	}
	return nil
}

func reportGuesses(w io.Writer, h *house, doc string) error {
	fs, err := h.firstGuesses(doc)
	if err != nil {
		return err
	}
	hits := 0
	for _, f := range fs {
		if f.atFirstGuess() {
			hits++
		}
	}
	fmt.Fprintf(w, "== first-guess test (%s \"Where to find it\"): %d of %d in the one file named first\n", doc, hits, len(fs))
	for _, f := range fs {
		mark := "yes"
		if !f.atFirstGuess() {
			mark = "no "
		}
		guess := f.guess
		if guess == "" {
			guess = "(no row)"
		}
		line := fmt.Sprintf("  %s %s: guess %s; declared in %s", mark, f.name, guess, strings.Join(f.files, ", "))
		if len(f.missing) > 0 {
			line += "; not found: " + strings.Join(f.missing, ", ")
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// lineCount counts the lines of a file.
func lineCount(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n := strings.Count(string(data), "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n, nil
}
