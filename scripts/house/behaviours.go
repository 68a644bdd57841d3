package main

import (
	"bufio"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// A behaviour a maintainer looks for (issue 45), and the declarations that
// carry it: a maintainer finds it at the first guess when every one of them
// is in the file docs/architecture.md names first for it ("Where to find
// it"). A symbol is "pkg.Name" or "pkg.Type.Method", pkg relative to the
// module; one that no longer exists is reported, so the list follows the
// code.
type behaviour struct {
	name    string
	symbols []string
}

var behaviours = []behaviour{
	// The policy that orders a code request's draws, and the planned draw.
	{"planned draws", []string{
		"nodes/implementor.drawPolicy", "nodes/implementor.drawPolicy.next", "nodes/implementor.drawPlanned"}},
	// How a run that ended is settled (done only with evidence), the status
	// and standing every screen shows, and the process's exit code.
	{"a run's final status", []string{
		"runstate.Settle", "runstate.OutcomeOfStop", "runstate.StandingOf", "runstate.ExitCode"}},
	// What a repository's project file may not set, and the refusal.
	{"a project setting refused", []string{
		"config.trustTable", "config.trustCheck.check", "config.trustCheck.refusal"}},
	// A message a user told a running run becoming a directive between nodes.
	{"a `tell` picked up", []string{
		"nodes.TakeTells", "nodes.fileTell", "nodes.steering.steerHook"}},
	// The paths a confined command may write, and those kept from it.
	{"the paths a gate may write", []string{
		"sandbox.Box.writable", "sandbox.Box.confine", "sandbox.gitEntries"}},
	// The scripted model server: its routes, its script, its answers.
	{"the scripted model server", []string{
		"llm/llmtest.Server", "llm/llmtest.NewServer", "llm/llmtest.Server.serve", "llm/llmtest.Server.pick"}},
	// A step's record written to the store, and when the store is synced
	// (around a step with side effects).
	{"a checkpoint written and synced", []string{
		"graph.runner.commit", "graph.runner.sync", "graph.runner.loop"}},
	// A remit written as a list: the items read, the one list detector, the
	// plan of a task per item.
	{"a list remit split into tasks", []string{
		"nodes.remitItems", "nodes.listLine", "nodes.remitList", "nodes.quickPath.listPlan"}},
}

// found is what the first-guess test found for one behaviour.
type found struct {
	behaviour
	guess   string   // the file the doc names first ("" if none)
	files   []string // the files its symbols are declared in
	missing []string // symbols not found
}

func (f found) atFirstGuess() bool {
	return f.guess != "" && len(f.missing) == 0 && len(f.files) == 1 && f.files[0] == f.guess
}

// firstGuesses runs the first-guess test against the doc at docPath.
func (h *house) firstGuesses(docPath string) ([]found, error) {
	guesses, err := readGuesses(docPath)
	if err != nil {
		return nil, err
	}
	var out []found
	for _, b := range behaviours {
		f := found{behaviour: b, guess: guesses[strings.ToLower(b.name)]}
		files := map[string]bool{}
		for _, s := range b.symbols {
			file, ok := h.declaredIn(s)
			if !ok {
				f.missing = append(f.missing, s)
				continue
			}
			files[file] = true
		}
		for file := range files {
			f.files = append(f.files, file)
		}
		sort.Strings(f.files)
		out = append(out, f)
	}
	return out, nil
}

// declaredIn is the file (relative to the module) that declares a symbol.
func (h *house) declaredIn(symbol string) (string, bool) {
	// The package is the longest prefix that is a package of the module.
	for cut := len(symbol); cut > 0; cut = strings.LastIndexByte(symbol[:cut], '.') {
		rel, rest := symbol[:cut], symbol[cut:]
		if rel == "" {
			break
		}
		p := h.pkgs[rel]
		if p == nil || p.types == nil || rest == "" {
			continue
		}
		name, method, _ := strings.Cut(strings.TrimPrefix(rest, "."), ".")
		obj := p.types.Scope().Lookup(name)
		if obj == nil {
			return "", false
		}
		if method != "" {
			m, _, _ := types.LookupFieldOrMethod(types.NewPointer(obj.Type()), true, p.types, method)
			if m == nil {
				return "", false
			}
			obj = m
		}
		return h.fileOf(obj.Pos()), true
	}
	return "", false
}

// guessRow is a row of the table under "### Where to find it": the
// behaviour, then the files, the first guess first.
var (
	guessRow  = regexp.MustCompile(`^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|`)
	guessFile = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go)`")
)

// readGuesses reads the doc's table: behaviour (lower case) → first file.
func readGuesses(docPath string) (map[string]string, error) {
	f, err := os.Open(docPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(strings.TrimLeft(line, "#")) == "Where to find it"
			continue
		}
		m := guessRow.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		cell := strings.ToLower(m[1])
		for _, b := range behaviours {
			if strings.HasPrefix(cell, strings.ToLower(b.name)) {
				if g := guessFile.FindStringSubmatch(m[2]); g != nil {
					out[strings.ToLower(b.name)] = filepath.ToSlash(g[1])
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", docPath, err)
	}
	return out, nil
}
