package main

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// A floor is a level of the house. Packages depend downward: an import
// from a package to one on a higher floor is an arrow running back up.
// Within a floor imports go either way.
//
// A package's floor is read from its path alone, so a reader can tell a
// package's level from where it lives: the test kits are found first (a
// package whose name ends in "test", or anything under internal/testkit/),
// then the first floor, from the bottom, one of whose patterns matches.
// "x/*" matches the packages one level below x, "x/..." x and everything
// below it. A package no pattern matches is an error: a new package gets a
// floor on purpose.
type floor struct {
	name     string
	what     string
	patterns []string
}

var floors = []floor{
	{"leaves", "helpers every package may use, and the graph runtime: nothing of lemmings above them",
		[]string{"graph", "internal/*", "workspace/splice", "workspace/tidy", "sandbox/internal/..."}},
	{"words", "a run's vocabulary and files, what every reader of a run imports",
		[]string{"runstate", "events", "runfiles"}},
	{"services", "what the workflow is given: models, knowledge, retrieval, the work tree, the sandbox, configuration, traces, stores",
		[]string{"sandbox", "sandbox/helper", "codingcli", "config", "llm", "llm/...", "knowledge", "rag", "workspace", "tracing",
			"cluster/pgstore", "cluster/gitremote", "cluster/pglocal"}},
	{"views", "a stored run read and shown, without the workflow",
		[]string{"runview", "inspect"}},
	{"workflow", "the graph of nodes and what they use",
		[]string{"nodes", "nodes/..."}},
	{"wiring", "a run started or resumed: configuration to workflow",
		[]string{"run"}},
	{"features", "what a command offers: the web app, the MCP server, the eval, the demo, the cluster",
		[]string{"serve", "mcpserver", "eval", "demo", "cluster", "cluster/clusterdemo"}},
	{"commands", "programs: the CLI and its features, the repository's scripts",
		[]string{"cmd/...", "scripts/..."}},
	{"kits", "test kits: what tests (and nothing in production) import",
		nil},
}

// kitFloor is the index of the test kits' floor.
var kitFloor = len(floors) - 1

// isKit: a package whose name ends in "test", or one under internal/testkit/.
func isKit(rel string) bool {
	return strings.HasSuffix(path.Base(rel), "test") || strings.HasPrefix(rel, "internal/testkit/")
}

// floorOf is the floor of a package (its path relative to the module), or
// an error naming the package no floor holds.
func floorOf(rel string) (int, error) {
	if isKit(rel) {
		return kitFloor, nil
	}
	for i, f := range floors {
		for _, p := range f.patterns {
			if matchPattern(p, rel) {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("package %s is on no floor: give it one in scripts/house/floors.go", rel)
}

func matchPattern(pattern, rel string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	if base, ok := strings.CutSuffix(pattern, "/*"); ok {
		rest, ok := strings.CutPrefix(rel, base+"/")
		return ok && !strings.Contains(rest, "/")
	}
	return rel == pattern
}

// arrow is an import between two of the module's packages.
type arrow struct {
	from, to           string
	fromFloor, toFloor int
}

// arrows lists the imports between the module's packages (non-test files)
// and those that run back up a floor.
func (h *house) arrows() (all, up []arrow, err error) {
	for _, rel := range h.order {
		from, err := floorOf(rel)
		if err != nil {
			return nil, nil, err
		}
		for _, imp := range h.pkgs[rel].Imports {
			if !h.inModule(imp) {
				continue
			}
			to, err := floorOf(h.rel(imp))
			if err != nil {
				return nil, nil, err
			}
			a := arrow{rel, h.rel(imp), from, to}
			all = append(all, a)
			if to > from {
				up = append(up, a)
			}
		}
	}
	sort.Slice(up, func(i, j int) bool { return up[i].from+" "+up[i].to < up[j].from+" "+up[j].to })
	return all, up, nil
}

// floorPlan lists each floor with its packages.
func (h *house) floorPlan() ([][]string, error) {
	plan := make([][]string, len(floors))
	for _, rel := range h.order {
		i, err := floorOf(rel)
		if err != nil {
			return nil, err
		}
		plan[i] = append(plan[i], rel)
	}
	for _, ps := range plan {
		sort.Strings(ps)
	}
	return plan, nil
}
