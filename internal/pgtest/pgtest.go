// Package pgtest starts a real PostgreSQL server for the tests of one test
// binary and gives each test a schema of its own.
//
// The server is started once, on the first New, by running initdb and
// postgres directly (never pg_ctl: a server it daemonizes outlives a test
// binary killed by go test -timeout). postgres runs as a child in its own
// process group with a parent-death signal, as the postgres OS user when the
// tests run as root (initdb refuses root), on a free loopback port, with
// fsync off. Call Stop from TestMain to remove it.
//
// LEMMINGS_TEST_POSTGRES=0 skips every test that needs the server; =1, or CI
// set, makes missing binaries fail the test instead of skipping it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvRequire names the variable that requires ("1") or skips ("0") the server.
const EnvRequire = "LEMMINGS_TEST_POSTGRES"

// Server is a running PostgreSQL server owned by this process.
type Server struct {
	bin     string
	dataDir string
	root    string
	port    int
	cred    *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

var (
	once    sync.Once
	shared  *Server
	initErr error
	schemas atomic.Int64
)

// New returns a DSN for a fresh schema of the shared server (search_path set
// to it), starting the server on first use. The schema is dropped when the
// test ends.
func New(t testing.TB) string {
	t.Helper()
	s := Shared(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), schemas.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DSN(""))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, s.DSN(""))
		if err != nil {
			return // the server is gone (a test stopped it): nothing to drop
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
	})
	return s.DSN(name)
}

// Shared returns the server of this test binary, starting it on first use.
// Missing binaries skip the test, or fail it under CI or EnvRequire=1.
func Shared(t testing.TB) *Server {
	t.Helper()
	if os.Getenv(EnvRequire) == "0" {
		t.Skipf("%s=0: tests that need PostgreSQL are skipped", EnvRequire)
	}
	bin, err := FindBin()
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: %v (apt-get install postgresql)", err)
		}
		t.Skipf("pgtest: %v", err)
	}
	once.Do(func() { shared, initErr = Start(bin) })
	if initErr != nil {
		t.Fatalf("pgtest: %v", initErr)
	}
	return shared
}

// Stop stops the shared server, if one was started, and removes its files.
func Stop() {
	if shared != nil {
		shared.Close()
	}
}

// FindBin finds the directory holding initdb and postgres: on PATH, or the
// newest under /usr/lib/postgresql (Debian keeps them off PATH).
func FindBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin")
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start runs initdb in a new temporary directory and starts postgres on a
// free loopback port.
func Start(bin string) (*Server, error) {
	s := &Server{bin: bin}
	root, err := os.MkdirTemp("", "lemmings-pg-")
	if err != nil {
		return nil, err
	}
	s.root, s.dataDir = root, filepath.Join(root, "data")
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("running as root, and initdb refuses root: no postgres user to run it as (%v)", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(root, uid, gid); err != nil {
			os.RemoveAll(root)
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", s.dataDir, "-U", "postgres",
		"--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := s.start(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start() error {
	var lastErr error
	for range 5 {
		if s.port == 0 {
			p, err := freePort()
			if err != nil {
				return err
			}
			s.port = p
		}
		if lastErr = s.launch(); lastErr == nil {
			return nil
		}
		s.port = 0 // taken meanwhile: try another
	}
	return lastErr
}

func (s *Server) launch() error {
	logf, err := os.OpenFile(filepath.Join(s.root, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.root,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (a terminal's Ctrl-C is ours to handle) and a
	// parent-death signal, so a killed test binary takes the server with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Pdeathsig fires when the starting thread ends: keep it for the child's life.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(done)
			return
		}
		started <- nil
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.mu.Lock()
	s.cmd, s.done, s.log = cmd, done, logf
	s.mu.Unlock()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("postgres exited at start: %s", s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.DSN(""))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill(syscall.SIGKILL)
	return fmt.Errorf("postgres did not accept connections within 15s: %s", s.logTail())
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.root, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Port is the server's loopback port.
func (s *Server) Port() int { return s.port }

// DSN is a connection string to the postgres database, with search_path set
// to schema when it is not empty.
func (s *Server) DSN(schema string) string {
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	if schema != "" {
		dsn += "&search_path=" + schema
	}
	return dsn
}

func (s *Server) kill(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Restart stops the server the way pg_ctl stop -m immediate does (SIGQUIT:
// no shutdown checkpoint, crash recovery at the next start), waits down,
// then starts it again on the same port.
func (s *Server) Restart(down time.Duration) error {
	s.kill(syscall.SIGQUIT)
	time.Sleep(down)
	return s.launch()
}

// Close stops the server (fast shutdown) and removes its files.
func (s *Server) Close() {
	s.kill(syscall.SIGINT)
	os.RemoveAll(s.root)
}
