package clustertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/cluster/pglocal"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/pgtest"
	"github.com/lemmings-dev/lemmings/runstate"
)

// A box whose network link goes down in the middle of a step: the worker
// runs in a network namespace of its own, reaching PostgreSQL and its model
// server over a veth pair, and the namespace's end of the pair goes down.
// PostgreSQL's keepalives end the box's sessions, which frees the run; the
// other box takes it and finishes. The cut-off worker stops its model work
// (no model call from it once the link is back) and appends nothing, then
// or later.
func TestLinkDownStopsTheWorker(t *testing.T) {
	if os.Getenv(pgtest.EnvRequire) == "0" {
		t.Skipf("%s=0", pgtest.EnvRequire)
	}
	bin, err := pglocal.FindBin()
	if err != nil {
		pgtest.Shared(t) // skips, or fails under CI / LEMMINGS_TEST_POSTGRES=1
	}
	n := newNetns(t)

	// A server of its own: it listens on the veth address too, trusts the
	// namespace, and finds a dead peer in about 3 s.
	pg, err := pglocal.Start(pglocal.Options{Bin: bin, Fast: true, Listen: []string{n.hostIP},
		HBA:      []string{"host all all " + n.subnet + " trust"},
		Settings: []string{"tcp_keepalives_idle=1", "tcp_keepalives_interval=1", "tcp_keepalives_count=2", "tcp_user_timeout=3000"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	e := newEnvOn(t, pg.DSN("netns"))

	srv := demo.NewServer(&demo.Script{LocalLatency: 20 * time.Millisecond, ImplementorLatency: time.Second})
	defer srv.Close()
	proxy := newCallCounter(t, n.hostIP, srv.URL())

	a := e.newBox("box-a", proxy.url)
	a.wrap = []string{"ip", "netns", "exec", n.name}
	nsDSN := strings.Replace(e.dsn, "127.0.0.1", n.hostIP, 1)
	cfgPath := a.home + "/lemmings/config.yaml"
	cfg, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(string(cfg), e.dsn, nsDSN, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	b := e.newBox("box-b", srv.URL())

	id := e.submit(b)
	a.startWorker()
	e.waitFor(90*time.Second, "box-a to reach step 5 of the run", func() bool {
		snap, err := e.state(id)
		h, _ := e.holder(id)
		return err == nil && snap.Step >= 5 && h == "box-a"
	})
	b.startWorker()
	time.Sleep(300 * time.Millisecond) // inside the implementor's model call
	cutSnap, _ := e.state(id)
	records := e.recordCount(id)
	n.linkDown(t)
	cut := time.Now()
	t.Logf("link down at step %d (%d records)", cutSnap.Step, records)

	// Nothing is appended until another worker holds the run.
	e.waitFor(60*time.Second, "box-b to take the run", func() bool {
		if got := e.recordCount(id); got != records {
			if h, inc := e.holder(id); h != "box-b" || inc < 2 {
				t.Fatalf("record %d appended after the link went down, before box-b took the run", got)
			}
		}
		h, inc := e.holder(id)
		return h == "box-b" && inc >= 2
	})
	t.Logf("box-b took the run %v after the link went down", time.Since(cut).Round(time.Millisecond))
	// The cut-off box stops the run's model work by itself, link still down
	// (its last checkpoint write then fails within the TCP user timeout).
	e.waitFor(20*time.Second, "box-a to stop the run's model work", func() bool {
		return strings.Contains(a.logText(), "hold on the run lost")
	})
	t.Logf("box-a stopped the run's model work %v after the link went down", time.Since(cut).Round(time.Millisecond))
	e.waitFor(30*time.Second, "box-a's job to end", func() bool { return strings.Contains(a.logText(), "run stopped") })
	t.Logf("box-a's job ended %v after the link went down", time.Since(cut).Round(time.Millisecond))
	e.waitDone(id, 3*time.Minute)
	done, _ := e.state(id)
	doneRecords := e.recordCount(id)

	// The link comes back: the cut-off worker must not go on with the run.
	calls := proxy.chatCalls()
	n.linkUp(t)
	up := time.Now()
	time.Sleep(5 * time.Second)
	if got := proxy.chatCalls(); got != calls {
		t.Errorf("box-a made %d model calls after its link came back: its model work did not stop", got-calls)
	}
	if got, after := e.recordCount(id), mustState(e, id); got != doneRecords || after.Step != done.Step || after.Status != graph.StatusDone {
		t.Errorf("after the link came back: %d records (was %d), step %d %s (was %d done)", got, doneRecords, after.Step, after.Status, done.Step)
	}
	t.Logf("box-a %v after the link came back: %d model calls, no record", time.Since(up).Round(time.Millisecond), proxy.chatCalls()-calls)
}

func mustState(e *env, id string) graph.Snapshot[runstate.State] {
	snap, err := e.state(id)
	if err != nil {
		e.t.Fatal(err)
	}
	return snap
}

func (e *env) recordCount(id string) int {
	var n int
	_ = e.openDB().Pool().QueryRow(context.Background(), "SELECT count(*) FROM lemmings_records WHERE run_id = $1", id).Scan(&n)
	return n
}

// netns is a network namespace joined to this one by a veth pair.
type netns struct {
	name, hostIf, nsIf string
	hostIP, subnet     string
}

func newNetns(t *testing.T) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the link-down fault needs root (ip netns, veth pairs): run make test-cluster as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		if os.Getenv("CI") != "" || os.Getenv(pgtest.EnvRequire) == "1" {
			t.Fatal("the link-down fault needs iproute2's ip (apt-get install iproute2; .ci/run does)")
		}
		t.Skip("the link-down fault needs iproute2's ip (apt-get install iproute2)")
	}
	id := os.Getpid() % 50000
	n := &netns{name: fmt.Sprintf("lmtest%d", id), hostIf: fmt.Sprintf("lmh%d", id), nsIf: fmt.Sprintf("lmn%d", id)}
	third := id % 250
	n.hostIP, n.subnet = fmt.Sprintf("10.231.%d.1", third), fmt.Sprintf("10.231.%d.0/30", third)
	if out, err := exec.Command("ip", "netns", "add", n.name).CombinedOutput(); err != nil {
		t.Skipf("this machine cannot make network namespaces (ip netns add: %v: %s)", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", n.hostIf).Run()
		_ = exec.Command("ip", "netns", "del", n.name).Run()
	})
	for _, args := range [][]string{
		{"link", "add", n.hostIf, "type", "veth", "peer", "name", n.nsIf, "netns", n.name},
		{"addr", "add", n.hostIP + "/30", "dev", n.hostIf},
		{"link", "set", n.hostIf, "up"},
		{"-n", n.name, "addr", "add", fmt.Sprintf("10.231.%d.2/30", third), "dev", n.nsIf},
		{"-n", n.name, "link", "set", n.nsIf, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return n
}

func (n *netns) linkDown(t *testing.T) { n.ip(t, "-n", n.name, "link", "set", n.nsIf, "down") }
func (n *netns) linkUp(t *testing.T)   { n.ip(t, "-n", n.name, "link", "set", n.nsIf, "up") }

func (n *netns) ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// callCounter is the namespaced box's way to its model server: a reverse
// proxy on the veth address that counts the chat calls through it.
type callCounter struct {
	url   string
	mu    sync.Mutex
	chats int
}

func newCallCounter(t *testing.T, ip, target string) *callCounter {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	c := &callCounter{}
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat") || strings.HasSuffix(r.URL.Path, "/completions") {
			c.mu.Lock()
			c.chats++
			c.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		hs.Close()
	})
	c.url = "http://" + l.Addr().String()
	return c
}

func (c *callCounter) chatCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chats
}
