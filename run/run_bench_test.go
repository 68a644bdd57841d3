package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/run"
)

// writePlan writes an operator plan of n trivial tasks: create fNN.txt.
func writePlan(t testing.TB, n int) string {
	var b strings.Builder
	b.WriteString("milestones:\n  - goal: Create the files.\n    tasks:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "      - title: Create file f%02d.txt\n        acceptance_criteria: [\"f%02d.txt exists\"]\n", i, i)
	}
	p := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileWriter plays an implementor that creates the file its task names.
func fileWriter(c llmtest.Call) llmtest.Reply {
	task := llmtest.Section(c.Messages[1].Content, prompts.SecTask)
	name := "out.txt"
	if i := strings.Index(task, "Create file "); i >= 0 {
		name = strings.Fields(task[i+len("Create file "):])[0]
	}
	steps := 0
	for _, m := range c.Messages[2:] {
		if m.Role == "assistant" {
			steps++
		}
	}
	a := map[string]any{"thought": "create it", "action": "write_file", "path": name, "content": "made by lemmings\n"}
	if steps > 0 {
		a = map[string]any{"thought": "done", "action": "finish", "summary": "created " + name}
	}
	body, _ := json.Marshal(a)
	return llmtest.Reply{Content: string(body)}
}

// cpuTime is this process's user and system CPU so far.
func cpuTime() (user, sys time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// BenchmarkScriptedRun20Tasks runs a 20-task plan with zero model latency and
// a trivial gate. cpu-ms/task is this process's CPU (lemmings plus the
// in-process scripted server); git and the gates run as child processes, so
// their own CPU is not in it, but starting them (fork, pipes) is, in sys-ms.
func BenchmarkScriptedRun20Tasks(b *testing.B) {
	const tasks = 20
	plan := writePlan(b, tasks)
	srv := demo.NewServer(&demo.Script{}, llmtest.Step{Name: "writer", Times: -1,
		Match:   func(c llmtest.Call) bool { return c.Role() == prompts.Implementor },
		Respond: fileWriter})
	defer srv.Close()
	cfg := demo.Config(srv.URL())
	cfg.Supervisors.Enabled = false
	cfg.Gates = []config.Gate{{Name: "check", Command: "true", Timeout: time.Minute}}
	cfg.Limits.ReviewInterval = 5

	var wall, user, sys time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		repo := filepath.Join(b.TempDir(), "repo")
		if err := demo.PrepareRepo(context.Background(), repo); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		u0, s0 := cpuTime()
		res, err := run.Start(context.Background(), run.Options{RepoDir: repo, PlanFile: plan, Config: cfg})
		wall += time.Since(start)
		u1, s1 := cpuTime()
		user, sys = user+u1-u0, sys+s1-s0
		if err != nil || res.State.TasksCompleted != tasks {
			b.Fatalf("run: %v, %d tasks done (%s)", err, res.State.TasksCompleted, res.State.StopReason)
		}
	}
	n := float64(b.N * tasks)
	b.ReportMetric(float64(wall.Milliseconds())/n, "wall-ms/task")
	b.ReportMetric(float64((user+sys).Microseconds())/1000/n, "cpu-ms/task")
	b.ReportMetric(float64(user.Microseconds())/1000/n, "user-ms/task")
	b.ReportMetric(float64(sys.Microseconds())/1000/n, "sys-ms/task")
}
