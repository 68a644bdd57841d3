// Package pglocal starts a throwaway PostgreSQL server owned by the calling
// process: for lemmings demo --cluster and for the tests (internal/pgtest).
//
// It runs initdb and postgres directly, never pg_ctl: a server pg_ctl
// daemonizes outlives a parent that is killed. postgres runs as a child in
// its own process group with a parent-death signal, on a free loopback port,
// trusting local connections, as the postgres OS user when the caller is
// root (initdb refuses root) and as the caller otherwise.
package pglocal

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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries: the PostgreSQL server programs are not installed.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin")

// Hint is how to install them on Debian and Ubuntu.
const Hint = "apt-get install postgresql"

// Server is a running PostgreSQL server owned by this process.
type Server struct {
	bin     string
	dataDir string
	root    string
	port    int
	cred    *syscall.Credential
	o       Options

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Options tune Start.
type Options struct {
	// Bin is the directory of initdb and postgres (default: FindBin).
	Bin string
	// Fast turns durability off (fsync, synchronous commit): for tests and
	// demos, whose data does not outlive them.
	Fast bool
	// Listen adds addresses to listen on besides 127.0.0.1, and HBA lines
	// to pg_hba.conf (say "host all all 10.0.0.0/30 trust"), for clients in
	// another network namespace.
	Listen []string
	HBA    []string
	// Settings are more server settings, "name=value" each.
	Settings []string
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
	return "", ErrNoBinaries
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start runs initdb in a new temporary directory and starts postgres on a
// free loopback port. Close stops it and removes the directory.
func Start(o Options) (*Server, error) {
	if o.Bin == "" {
		bin, err := FindBin()
		if err != nil {
			return nil, fmt.Errorf("%w (%s)", err, Hint)
		}
		o.Bin = bin
	}
	s := &Server{bin: o.Bin, o: o}
	root, err := os.MkdirTemp("", "lemmings-pg-")
	if err != nil {
		return nil, err
	}
	s.root, s.dataDir = root, filepath.Join(root, "data")
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("running as root, and initdb refuses root: no postgres user to run it as (%v; %s creates one)", err, Hint)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(root, uid, gid); err != nil {
			os.RemoveAll(root)
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(s.bin, "initdb"), "-D", s.dataDir, "-U", "postgres",
		"--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if len(o.HBA) > 0 {
		f, err := os.OpenFile(filepath.Join(s.dataDir, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(strings.Join(o.HBA, "\n") + "\n")
			f.Close()
		}
		if err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("pg_hba.conf: %w", err)
		}
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
	logf, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{"-D", s.dataDir, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=" + strings.Join(append([]string{"127.0.0.1"}, s.o.Listen...), ","), "-c", "unix_socket_directories=" + s.root,
		"-c", "max_connections=300", "-c", "shared_buffers=32MB"}
	if s.o.Fast {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, kv := range s.o.Settings {
		args = append(args, "-c", kv)
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (a terminal's Ctrl-C is ours to handle) and a
	// parent-death signal, so a killed parent takes the server with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Pdeathsig fires when the starting thread ends: keep it for the child's life.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			logf.Close()
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
	s.cmd, s.done = cmd, done
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
	b, _ := os.ReadFile(s.LogPath())
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// LogPath is the server's log file.
func (s *Server) LogPath() string { return filepath.Join(s.root, "server.log") }

// Dir is the directory holding the server's data and log; Close removes it.
func (s *Server) Dir() string { return s.root }

// Port is the server's loopback port.
func (s *Server) Port() int { return s.port }

// PID is the postgres process id (0 when it is not running).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	select {
	case <-s.done:
		return 0
	default:
		return s.cmd.Process.Pid
	}
}

// DSN is a connection string to the postgres database as the postgres
// role, with search_path set to schema when it is not empty.
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

// Close stops the server (fast shutdown: SIGINT) and removes its files.
func (s *Server) Close() {
	s.kill(syscall.SIGINT)
	os.RemoveAll(s.root)
}
