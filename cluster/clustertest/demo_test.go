package clustertest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/cluster/pglocal"
	"github.com/lemmings-dev/lemmings/internal/pgtest"
)

// lemmings demo --cluster, through the binary, as a user runs it: the run
// survives the SIGKILL of the worker holding it, and when the demo exits no
// process it started is left and its directories are gone.
func TestDemoCluster(t *testing.T) {
	if _, err := pglocal.FindBin(); err != nil {
		pgtest.Shared(t) // skips, or fails under CI / LEMMINGS_TEST_POSTGRES=1
	}
	if os.Getenv(pgtest.EnvRequire) == "0" {
		t.Skipf("%s=0", pgtest.EnvRequire)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lemmingsBin(t), "demo", "--cluster")
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = (&box{home: t.TempDir()}).environ()
	start := time.Now()
	err := cmd.Run()
	text := out.String()
	t.Logf("demo --cluster in %v:\n%s", time.Since(start).Round(time.Millisecond), text)
	if err != nil {
		t.Fatalf("demo --cluster: %v", err)
	}
	for _, want := range []string{"PostgreSQL started", "box-a took the run", "SIGKILL box-", "took the run over (incarnation 2)",
		"done — 3 tasks done, 0 failed", "Fix MeanWordLength integer division", "Add a -top flag", "PostgreSQL stopped", "workers stopped"} {
		if !strings.Contains(text, want) && !(want == "box-a took the run" && strings.Contains(text, "box-b took the run")) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	// Every line names the step the SIGKILL cut off the same (it said step 9, then "killed at
	// step 8": the last step stored).
	var killed []string
	for _, m := range regexp.MustCompile(`(?:in the middle of|SIGKILLed in the middle of) step (\d+)`).FindAllStringSubmatch(text, -1) {
		killed = append(killed, m[1])
	}
	if len(killed) != 3 || killed[0] != killed[1] || killed[1] != killed[2] {
		t.Errorf("the killed step, as the demo says it three times: %q", killed)
	}
	// Each task committed once on the remote's run branch.
	for _, title := range []string{"Fix MeanWordLength integer division", "Add TopWords with a test", "Add a -top flag to the textstats command"} {
		if n := strings.Count(text, " "+title+"\n"); n != 1 {
			t.Errorf("commit %q listed %d times", title, n)
		}
	}
	// Nothing left behind: the server, the workers, the directories.
	var pids []int
	for _, m := range regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		pids = append(pids, n)
	}
	if len(pids) < 3 {
		t.Fatalf("want the pids of PostgreSQL and two workers in the output, got %v", pids)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after the demo (%v)", pid, err)
		}
	}
	for _, m := range regexp.MustCompile(`(/\S*lemmings-(?:pg|cluster-demo)-\d+)`).FindAllStringSubmatch(text, -1) {
		if _, err := os.Stat(m[1]); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after the demo", m[1])
		}
	}
}
