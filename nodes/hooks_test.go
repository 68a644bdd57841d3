package nodes

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
)

// The supervisors attach by hooks: no node file calls into package
// supervisors' running of jobs (nodes/supervisors) or its wiring
// (sup_wiring.go), so when they fire is changed in one place (the hook,
// routing). On main before the hooks, planner, plan_*, complete, qa, scope,
// assessor and polish made 34 calls to 23 functions of sup_*.go.
func TestNodesCallNoSupervisorCode(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	declared := func(patterns ...string) map[string]bool {
		names := map[string]bool{}
		for _, pattern := range patterns {
			files, _ := filepath.Glob(pattern)
			for _, f := range files {
				if strings.HasSuffix(f, "_test.go") {
					continue
				}
				af, err := parser.ParseFile(fset, f, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range af.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok {
						names[fd.Name.Name] = true
					}
				}
			}
		}
		return names
	}
	sup := declared("sup_*.go", "supervisors/run.go", "supervisors/input.go", "supervisors/hook.go", "supervisors/jobs.go")
	// A helper of the same name in nodes (clip, now) is not the supervisors'.
	for name := range declared("[a-r]*.go", "s[a-tv-z]*.go", "[t-z]*.go") {
		delete(sup, name)
	}
	if len(sup) < 20 {
		t.Fatalf("found %d functions of the supervisors: the test no longer sees them", len(sup))
	}
	for _, pattern := range []string{"planner.go", "plan_*.go", "split.go", "complete.go", "qa*.go", "scope.go", "assessor.go", "polish.go", "quick.go", "directives.go"} {
		matches, _ := filepath.Glob(pattern)
		for _, f := range matches {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				name := ""
				switch fn := c.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
					if x, ok := fn.X.(*ast.Ident); ok && x.Name == "supervisors" {
						t.Errorf("%s calls supervisors.%s: report a fact (happen) and let supervisorHook act on it", fset.Position(c.Pos()), name)
						return true
					}
				}
				if sup[name] {
					t.Errorf("%s calls %s of the supervisors: report a fact (happen) and let supervisorHook act on it", fset.Position(c.Pos()), name)
				}
				return true
			})
		}
	}
}

func TestHooksRunAroundEveryNodeInOrder(t *testing.T) {
	t.Parallel()
	var trace []string
	rec := func(name string) Hook {
		return Hook{Name: name,
			Before: func(_ context.Context, node string, s *runstate.State) error {
				trace = append(trace, name+" before "+node)
				s.Warnings = append(s.Warnings, "seen by "+name)
				return nil
			},
			After: func(_ context.Context, node string, s *runstate.State) error {
				trace = append(trace, name+" after "+node+" "+strings.Join(s.Happened, ","))
				return nil
			}}
	}
	fn := around(runstate.NodeQA, []Hook{rec("a"), rec("b"), {Name: "elsewhere", Nodes: []string{runstate.NodePlanner},
		After: func(context.Context, string, *runstate.State) error { trace = append(trace, "wrong node"); return nil }}},
		func(_ context.Context, s runstate.State) (runstate.State, error) {
			trace = append(trace, "node sees "+strings.Join(s.Warnings, "; "))
			happen(&s, runstate.HappenedQAFailed)
			return s, nil
		})
	in := runstate.State{}
	out, err := fn(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a before qa", "b before qa", "node sees seen by a; seen by b", "a after qa qa_failed", "b after qa qa_failed"}
	if !slices.Equal(trace, want) {
		t.Errorf("trace %q\nwant  %q", trace, want)
	}
	if len(out.Happened) != 0 {
		t.Errorf("facts %v reached the checkpoint", out.Happened)
	}
	if len(in.Warnings) != 0 {
		t.Error("a Before hook changed the caller's state instead of a copy")
	}
}

func TestAHookErrorFailsTheStepAndAPauseStillRunsTheAfterHooks(t *testing.T) {
	t.Parallel()
	boom := errors.New("landing failed")
	fn := around(runstate.NodePlanner, []Hook{{Name: "x", Before: func(context.Context, string, *runstate.State) error { return boom }}},
		func(context.Context, runstate.State) (runstate.State, error) {
			t.Error("the node ran after its Before hook failed")
			return runstate.State{}, nil
		})
	if _, err := fn(context.Background(), runstate.State{}); !errors.Is(err, boom) {
		t.Errorf("err %v, want the hook's", err)
	}
	after := 0
	fn = around(runstate.NodePlanner, []Hook{{Name: "y", After: func(context.Context, string, *runstate.State) error { after++; return nil }}},
		func(_ context.Context, s runstate.State) (runstate.State, error) {
			return s, graph.Interrupt("approve")
		})
	if _, err := fn(context.Background(), runstate.State{}); err == nil || after != 1 {
		t.Errorf("pause: err %v, after hooks %d; want the pause and one After", err, after)
	}
}
