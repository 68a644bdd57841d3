package run

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// Injected model latency of BenchmarkSupervisorModes: small by default so
// `go test -bench` is quick; the figures are
//
//	LEMMINGS_SUP_BENCH_LOCAL=2s LEMMINGS_SUP_BENCH_CLOUD=10s
func supBenchLatency(b *testing.B) (local, cloud time.Duration) {
	local, cloud = 20*time.Millisecond, 100*time.Millisecond
	for _, v := range []struct {
		env string
		d   *time.Duration
	}{{"LEMMINGS_SUP_BENCH_LOCAL", &local}, {"LEMMINGS_SUP_BENCH_CLOUD", &cloud}} {
		if s := os.Getenv(v.env); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil {
				b.Fatalf("%s: %v", v.env, err)
			}
			*v.d = d
		}
	}
	return local, cloud
}

var supBenchLastTask = regexp.MustCompile(`(?m)^- (t\d+) \[`)

// supBenchSupervisor finds something new on every run (so no supervisor
// converges and they all keep their default intervals) and the Internaliser
// writes a lesson each time, as a busy real run would.
func supBenchSupervisor(role string, c llmtest.Call) (llmtest.Reply, bool) {
	done := supBenchLastTask.FindAllStringSubmatch(llmtest.Section(supFirstUser(c), prompts.SecDoneList), -1)
	last := "t0"
	if len(done) > 0 {
		last = done[len(done)-1][1]
	}
	switch role {
	case prompts.Internaliser:
		return supReply(map[string]any{"knowledge_items": []any{map[string]any{
			"category": "lesson", "title": "What " + last + " taught", "content": "Files are written whole, then committed.",
			"source_task": last, "confidence": "medium", "needs_user_review": false}}, "summary": "one lesson"}), true
	case prompts.CodeStyle:
		r := suptest.EmptySupervisorReply(role)
		r["findings"] = []string{"style note after " + last}
		return supReply(r), true
	}
	return llmtest.Reply{}, false
}

// nodeTime sums the durations of a node's runs.
func (e *supEnv) nodeTime(node string) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	var d time.Duration
	for _, ev := range e.events {
		if ev.Kind == graph.EventNodeEnd && ev.Node == node && ev.Error == "" {
			d += ev.Duration
		}
	}
	return d
}

// BenchmarkSupervisorModes runs a 20-task plan (two milestones, a trivial
// gate) with injected latency — L per local call, 5·L per supervisor call by
// default — three times: supervisors off, blocking and
// background. It reports each wall time, the overhead of blocking and
// background over off (the target is background ≤ 5%), and the time the loop
// spent waiting for supervisors (in run_supervisors and at the polish phase's
// start). With the small default latency the fixed cost of the supervisors'
// knowledge commits (git) weighs more than at real latencies.
func BenchmarkSupervisorModes(b *testing.B) {
	local, cloud := supBenchLatency(b)
	b.Logf("latency: %s per local call, %s per supervisor call", local, cloud)
	modes := []string{"off", "blocking", "background"}
	wall := map[string]time.Duration{}
	runs := map[string]int{}
	waits := map[string]time.Duration{} // in run_supervisors and polish: where the loop waits for supervisors
	for i := 0; i < b.N; i++ {
		for _, mode := range modes {
			b.StopTimer()
			e := supNewEnv(b, &supTeam{LocalLatency: local, SupervisorLatency: cloud, Supervisor: supBenchSupervisor})
			e.Cfg.Limits.ReviewInterval = 5
			switch mode {
			case "off":
				e.Cfg.Supervisors.Enabled = false
			case "blocking":
				e.Cfg.Supervisors.Mode = "blocking"
			default:
				e.Cfg.Supervisors.Mode = "background"
			}
			plan := e.supPlan(10, 10)
			b.StartTimer()
			start := time.Now()
			res, err := e.start(context.Background(), plan)
			wall[mode] += time.Since(start)
			b.StopTimer()
			if err != nil || res.State.Outcome != runstate.OutcomeDone || res.State.TasksCompleted != 20 {
				b.Fatalf("%s: %v, outcome %q, %d tasks (%s)", mode, err, res.State.Outcome, res.State.TasksCompleted, res.State.StopReason)
			}
			if mode != "off" && (len(res.State.SupervisorRunLog) == 0 || len(res.State.SupervisorJobs) != 0) {
				b.Fatalf("%s: %d supervisor runs, %d jobs left", mode, len(res.State.SupervisorRunLog), len(res.State.SupervisorJobs))
			}
			runs[mode] += len(res.State.SupervisorRunLog)
			waits[mode] += e.nodeTime(runstate.NodeSupervisors) + e.nodeTime(runstate.NodePolish)
			b.StartTimer()
		}
	}
	n := float64(b.N)
	for _, mode := range modes {
		b.ReportMetric(wall[mode].Seconds()/n, mode+"-s")
	}
	b.ReportMetric(waits["blocking"].Seconds()/n, "blocking-wait-s")
	b.ReportMetric(waits["background"].Seconds()/n, "background-wait-s")
	b.ReportMetric(float64(runs["background"])/n, "background-sup-runs")
	b.ReportMetric(float64(runs["blocking"])/n, "blocking-sup-runs")
	b.ReportMetric(100*(wall["blocking"].Seconds()/wall["off"].Seconds()-1), "blocking-overhead-%")
	b.ReportMetric(100*(wall["background"].Seconds()/wall["off"].Seconds()-1), "background-overhead-%")
}
