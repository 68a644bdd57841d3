package run_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

// BenchmarkTracingCost20Tasks measures what tracing adds to a task's
// orchestration CPU: BenchmarkScriptedRun20Tasks' workload (a 20-task plan,
// zero model latency, a trivial gate; prompts logged, as by default) run
// without and with tracing in pairs, the order alternating, so that the
// load of a shared machine falls on both alike. The spans go to an endpoint
// on loopback that discards them (a collector's work is not lemmings').
// cpu-ms/task is this process's CPU (lemmings and the in-process scripted
// server; git and the gates are child processes).
func BenchmarkTracingCost20Tasks(b *testing.B) { benchTracingCost(b, false) }

// BenchmarkTracingCost20TasksWithPrompts: the same with tracing.prompts on,
// every call's messages and reply on its span.
func BenchmarkTracingCost20TasksWithPrompts(b *testing.B) { benchTracingCost(b, true) }

func benchTracingCost(b *testing.B, withPrompts bool) {
	const tasks = 20
	plan := writePlan(b, tasks)
	srv := demo.NewServer(&demo.Script{}, llmtest.Step{Name: "writer", Times: -1,
		Match:   func(c llmtest.Call) bool { return c.Role() == prompts.Implementor },
		Respond: fileWriter})
	defer srv.Close()
	d := otlptest.NewDiscard()
	defer d.Close()
	config := func(traced bool) *config.Config {
		cfg := demo.Config(srv.URL())
		cfg.Supervisors.Enabled = false
		cfg.Gates = []config.Gate{{Name: "check", Command: "true", Timeout: time.Minute}}
		cfg.Limits.ReviewInterval = 5
		cfg.Tracing.Enabled, cfg.Tracing.Endpoint, cfg.Tracing.Prompts = traced, d.URL(), withPrompts
		return cfg
	}
	var cpu [2]time.Duration // off, on
	once := func(traced bool) {
		b.StopTimer()
		repo := filepath.Join(b.TempDir(), "repo")
		if err := demo.PrepareRepo(context.Background(), repo); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		u0, s0 := cpuTime()
		res, err := run.Start(context.Background(), run.Options{RepoDir: repo, PlanFile: plan, Config: config(traced)})
		u1, s1 := cpuTime()
		if err != nil || res.State.TasksCompleted != tasks {
			b.Fatalf("run: %v, %d tasks done (%s)", err, res.State.TasksCompleted, res.State.StopReason)
		}
		i := 0
		if traced {
			i = 1
		}
		cpu[i] += u1 - u0 + s1 - s0
	}
	for i := 0; i < b.N; i++ {
		first := i%2 == 0
		once(!first)
		once(first)
	}
	n := float64(b.N * tasks)
	off, on := float64(cpu[0].Microseconds())/1000/n, float64(cpu[1].Microseconds())/1000/n
	b.ReportMetric(off, "off-cpu-ms/task")
	b.ReportMetric(on, "on-cpu-ms/task")
	b.ReportMetric(100*(on-off)/off, "added-%")
	b.ReportMetric(float64(d.Bytes())/1024/n, "export-KiB/task")
	if d.Requests() == 0 {
		b.Fatal("no span reached the endpoint")
	}
}
