package phoenix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment variables the harness reads.
const (
	// EnvRequire "1" makes Phoenix required: a missing install fails the test
	// (make test-traces sets it; so does CI unless it is "0"). "0" skips the
	// tests even when Phoenix is installed.
	EnvRequire = "LEMMINGS_TEST_PHOENIX"
	// EnvDir overrides the install folder (default <module root>/.tools/phoenix).
	EnvDir = "LEMMINGS_TEST_PHOENIX_DIR"
)

// Version is the Phoenix release scripts/phoenix.sh installs.
const Version = "20.26.1"

// How long Phoenix may take to answer: its Python start alone took 15-45 s
// on a loaded 2-core machine.
const startTimeout = 3 * time.Minute

// Server is a running Phoenix.
type Server struct {
	URL     string // http://127.0.0.1:port: UI, REST API and OTLP/HTTP (/v1/traces)
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

// Start runs Phoenix for t and stops it when t ends. It skips t when Phoenix
// is not installed, unless it is required (LEMMINGS_TEST_PHOENIX=1, or CI set);
// then t fails saying how to install it (make phoenix).
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binaryOrSkip(t)
	dir := t.TempDir()
	s := &Server{logPath: filepath.Join(dir, "phoenix.log"), done: make(chan struct{})}
	httpPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	grpcPort, err := freePort() // Phoenix also listens for OTLP/gRPC; never on its default 4317
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "http://127.0.0.1:" + httpPort
	logf, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close() // the child has its own copy
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Env = append(os.Environ(), "PHOENIX_HOST=127.0.0.1", "PHOENIX_PORT="+httpPort, "PHOENIX_GRPC_PORT="+grpcPort,
		"PHOENIX_WORKING_DIR="+filepath.Join(dir, "data"), "PHOENIX_TELEMETRY_ENABLED=false",
		"PHOENIX_DB_LOGGING_LEVEL=warning", "PHOENIX_LOGGING_LEVEL=warning")
	// Its own process group, and killed with the test binary if that dies first.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	t0 := time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("phoenix: start %s serve: %v", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("phoenix log (%s), last lines:\n%s", s.logPath, s.logTail(40))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.waitReady(ctx); err != nil {
		t.Fatalf("phoenix did not start: %v\n%s", err, s.logTail(40))
	}
	t.Logf("phoenix %s at %s (pid %d), ready in %v", Version, s.URL, s.cmd.Process.Pid, time.Since(t0).Round(time.Millisecond))
	return s
}

func (s *Server) waitReady(ctx context.Context) error {
	for {
		select {
		case <-s.done:
			return errors.New("phoenix exited")
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/healthz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer at %s/healthz within %v", s.URL, startTimeout)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// stop ends Phoenix and its process group: SIGTERM, then SIGKILL after 5 s.
func (s *Server) stop() {
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // whatever it left in its group
}

func (s *Server) logTail(n int) string {
	data, _ := os.ReadFile(s.logPath)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// Required says whether the environment requires Phoenix: LEMMINGS_TEST_PHOENIX=1,
// or CI set and LEMMINGS_TEST_PHOENIX not 0.
func Required() bool {
	switch os.Getenv(EnvRequire) {
	case "1", "true", "yes":
		return true
	case "0", "false", "no":
		return false
	}
	return os.Getenv("CI") != ""
}

// binaryOrSkip finds `phoenix` in the install folder or ends the test.
func binaryOrSkip(t testing.TB) string {
	t.Helper()
	switch os.Getenv(EnvRequire) {
	case "0", "false", "no":
		t.Skipf("Phoenix tests disabled by %s=%s", EnvRequire, os.Getenv(EnvRequire))
	}
	dir := os.Getenv(EnvDir)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".tools", "phoenix")
	}
	bin := filepath.Join(dir, "bin", "phoenix")
	info, err := os.Stat(bin)
	if err == nil && !info.IsDir() && info.Mode().Perm()&0o111 != 0 {
		if !Required() && testing.Short() {
			t.Skipf("Phoenix tests skipped in -short mode (set %s=1 to run them)", EnvRequire)
		}
		return bin
	}
	if Required() {
		t.Fatalf("the trace tests need Arize Phoenix %s at %s (required: %s=1 or CI set): install it with `make phoenix` (scripts/phoenix.sh)", Version, bin, EnvRequire)
	}
	t.Skipf("skipping the Phoenix test: no %s; install it with `make phoenix` (and set %s=1 to require it)", bin, EnvRequire)
	return ""
}

// moduleRoot walks up from the working directory to lemmings' go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/lemmings-dev/lemmings\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("phoenix: no go.mod of lemmings above %s", wd)
		}
	}
}
