package clustertest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/cluster"
	"github.com/lemmings-dev/lemmings/cluster/gitremote"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/internal/pgtest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/run"
)

// benchLatency is what every scripted chat call waits: the machine has two
// cores, so the model's time (a GPU's, on real boxes) must dominate for the
// benchmark to measure the cluster rather than the CPU.
const benchLatency = 300 * time.Millisecond

// benchGates make QA's gate a no-op: the gates' CPU time is not what the
// benchmark measures (the demo's go test would take most of two cores).
const benchGates = `gates:
  - {name: test, command: "true"}
`

// runsPerRound is how many runs one round submits at once: a multiple of
// every worker count measured, so no worker idles at the end of a round.
const runsPerRound = 4

// BenchmarkClusterThroughput submits rounds of demo remits to 1, 2 and 4
// workers (real binaries, real PostgreSQL, a real bare remote) sharing the
// scripted model server, and reports runs per minute. The target: N workers
// reach at least 0.8·N times the one-worker figure.
//
//	make bench-cluster
func BenchmarkClusterThroughput(b *testing.B) {
	skipUnlessAsked(b)
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			e := newEnv(b)
			e.extraYAML = benchGates
			srv := demo.NewServer(&demo.Script{LocalLatency: benchLatency})
			defer srv.Close()
			boxes := e.startBoxes(n, srv.URL())
			e.openDB()
			b.ResetTimer()
			start := time.Now()
			var ids []string
			for range b.N {
				var round []string
				for range runsPerRound {
					round = append(round, e.submitDirect())
				}
				for _, id := range round {
					e.waitDone(id, 10*time.Minute)
				}
				ids = append(ids, round...)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			runs := len(ids)
			b.ReportMetric(float64(runs)/elapsed.Minutes(), "runs/min")
			b.ReportMetric(elapsed.Seconds()/float64(runs), "s/run")
			b.ReportMetric(float64(len(srv.ChatCalls()))/float64(runs), "model-calls/run")
			b.ReportMetric(float64(tokens(srv.ChatCalls()))/float64(runs), "prompt-tokens/run")
			// Every box took part once there was enough work for all.
			if n > 1 {
				for _, bx := range boxes {
					if !strings.Contains(bx.logText(), "taking run") {
						b.Errorf("%s took no run", bx.name)
					}
				}
			}
		})
	}
}

// BenchmarkClusterTakeover measures the time from a worker's SIGKILL in
// the middle of a step to the next step its run stores on the other worker
// (target ≤ 5 s), once per iteration (-benchtime 3x: three kills).
func BenchmarkClusterTakeover(b *testing.B) {
	skipUnlessAsked(b)
	e := newEnv(b)
	e.extraYAML = benchGates
	srv := demo.NewServer(&demo.Script{LocalLatency: 50 * time.Millisecond, ImplementorLatency: benchLatency})
	defer srv.Close()
	boxes := e.startBoxes(2, srv.URL())
	byName := map[string]*box{boxes[0].name: boxes[0], boxes[1].name: boxes[1]}
	var takeovers, takes []time.Duration
	b.ResetTimer()
	for range b.N {
		id := e.submitDirect()
		e.waitFor(2*time.Minute, "the run to reach step 6", func() bool {
			snap, err := e.state(id)
			return err == nil && snap.Step >= 6
		})
		holder, inc := e.holder(id)
		victim := byName[holder]
		if victim == nil {
			b.Fatalf("run %s held by %q, not a box of this benchmark", id, holder)
		}
		time.Sleep(benchLatency / 3) // inside the next step's model call
		before, _ := e.state(id)
		other := boxes[0]
		if other == victim {
			other = boxes[1]
		}
		had := other.takings(id)
		killed := time.Now()
		victim.kill(syscall.SIGKILL)
		var taken time.Duration
		e.waitFor(30*time.Second, "another worker to store a step", func() bool {
			if taken == 0 && other.takings(id) > had {
				taken = time.Since(killed)
			}
			h, i := e.holder(id)
			snap, err := e.state(id)
			return err == nil && h != victim.name && i > inc && snap.Step > before.Step
		})
		takeovers = append(takeovers, time.Since(killed))
		takes = append(takes, taken)
		e.waitDone(id, 5*time.Minute)
		victim.startWorker() // the box comes back for the next round
	}
	b.StopTimer()
	var sum time.Duration
	for _, d := range takeovers {
		sum += d
	}
	b.ReportMetric(sum.Seconds()/float64(len(takeovers)), "takeover-s")
	b.ReportMetric(slices.Max(takeovers).Seconds(), "max-takeover-s")
	sum = 0
	for _, d := range takes {
		sum += d
	}
	b.ReportMetric(sum.Seconds()/float64(len(takes)), "taken-s") // the other worker's job started
}

// startBoxes starts n workers on the model server at url and waits until
// each is taking runs.
func (e *env) startBoxes(n int, url string) []*box {
	e.t.Helper()
	var boxes []*box
	for i := range n {
		bx := e.newBox(fmt.Sprintf("box-%c", 'a'+i), url)
		bx.startWorker()
		boxes = append(boxes, bx)
	}
	for _, bx := range boxes {
		e.waitFor(60*time.Second, bx.name+" to start", func() bool { return strings.Contains(bx.logText(), "worker started") })
	}
	return boxes
}

// submitDirect submits the demo remit from the origin repository in this
// process, as run --submit does, without starting a binary per run.
func (e *env) submitDirect() string {
	e.t.Helper()
	ctx := context.Background()
	id := run.NewRunID()
	base := gitRun(e.t, e.origin, "rev-parse", "HEAD")
	if err := (gitremote.Remote{URL: e.remote}).PushBase(ctx, e.origin, id, base); err != nil {
		e.t.Fatal(err)
	}
	sub := pgstore.Submission{RunID: id, Remit: demo.Remit, Base: base, Queue: cluster.QueueFor(demo.PrimaryModel)}
	if err := cluster.Submit(ctx, e.openDB(), sub); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// tokens estimates the prompt tokens of calls as the scripted server counts them.
func tokens(calls []llmtest.Call) int {
	n := 0
	for _, c := range calls {
		for _, m := range c.Messages {
			n += len(m.Content) / 4
		}
	}
	return n
}

// takings counts the times this box's worker took the run.
func (b *box) takings(id string) int {
	n := 0
	for _, l := range strings.Split(b.logText(), "\n") {
		if strings.Contains(l, `msg="taking run"`) && strings.Contains(l, " run="+id+" ") {
			n++
		}
	}
	return n
}

// skipUnlessAsked keeps these minutes-long benchmarks out of make bench.
func skipUnlessAsked(b *testing.B) {
	if os.Getenv(pgtest.EnvRequire) != "1" {
		b.Skipf("make bench-cluster runs it (%s=1)", pgtest.EnvRequire)
	}
}
