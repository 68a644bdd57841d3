// Package realollama runs the real Ollama server for tests: the binary `make ollama` builds,
// on a free loopback port with its own models folder and HOME, loaded with the tiny
// random-weight models of internal/tinymodel. See docs/testing-real-ollama.md.
package realollama

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lemmings-dev/lemmings/internal/tinymodel"
)

// Models names the models Start creates on the server.
type Models struct {
	Chat        string // completion + tools (tinymodel.Chat)
	ChatNoTools string // completion only: requests with tools get a 400
	Embed       string // embedding only (mean pooling, 64 dimensions)
}

// DefaultModels are the names Start gives the three models. The server lists them with a
// ":latest" tag appended.
func DefaultModels() Models {
	return Models{Chat: "tiny-chat", ChatNoTools: "tiny-notools", Embed: "tiny-embed"}
}

// Server is a running real Ollama server owned by one test.
type Server struct {
	URL       string        // base URL, "http://127.0.0.1:PORT"
	Host      string        // "127.0.0.1:PORT", the value for OLLAMA_HOST
	Models    Models        // created unless WithoutModels was given
	Trained   Trained       // created when WithTrainedModels was given, else empty
	Coder     Coder         // the coding models WithCoderModels created, else empty
	Bin       string        // the server binary
	Version   string        // what /api/version reported
	Files     tinymodel.Set // the generated weights and Modelfiles
	Home      string        // the server's HOME
	Timings   Timings       // how long start-up took
	proc      *process      // the `ollama serve` process group
	logPath   string        // the server's stdout and stderr
	modelsDir string        // OLLAMA_MODELS
	stop      func() error  // stops once; later calls return the first result
	env       []string      // environment for the server and for `ollama` CLI calls
	grace     time.Duration // SIGTERM → SIGKILL grace period
}

// Timings records the start-up costs of a Server.
type Timings struct {
	Generate time.Duration // writing the GGUF files and Modelfiles
	Ready    time.Duration // from exec to the first 200 from /api/version
	Create   time.Duration // creating the three models
	// CreateTrained is creating the trained models (WithTrainedModels), MiniLM's conversion
	// from safetensors most of it.
	CreateTrained time.Duration
	// CreateCoder is creating the coding models (WithCoderModels): a hard link and the
	// server reading the GGUF's header.
	CreateCoder time.Duration
}

type options struct {
	createModels bool
	env          map[string]string
	startTimeout time.Duration
	grace        time.Duration
	trained      bool
	coder        []string
}

// Option adjusts Start.
type Option func(*options)

// WithoutModels starts the server with an empty models folder; the files are still
// generated, and CreateModels creates them later (a "model missing, then present" test).
func WithoutModels() Option { return func(o *options) { o.createModels = false } }

// WithEnv sets an extra environment variable for the server, such as OLLAMA_DEBUG=1 or
// OLLAMA_CONTEXT_LENGTH=2048. OLLAMA_HOST, OLLAMA_MODELS and HOME are the harness's own.
func WithEnv(key, value string) Option { return func(o *options) { o.env[key] = value } }

// WithStartTimeout bounds the wait for the server to answer (default 60s).
func WithStartTimeout(d time.Duration) Option { return func(o *options) { o.startTimeout = d } }

// Start runs a real Ollama server for t and stops it, with every process it spawned, when t
// ends — passed, failed or panicked. It skips t when the binary is missing, unless
// LEMMINGS_REAL_OLLAMA=1 requires it; then t fails with how to build it (`make ollama`).
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := options{createModels: true, env: map[string]string{},
		startTimeout: 60 * time.Second, grace: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	bin := binaryOrSkip(t)
	var trainedDir string
	if o.trained {
		trainedDir = trainedOrSkip(t)
	}
	var coderPaths map[string]string
	if len(o.coder) > 0 {
		coderPaths = coderOrSkip(t, o.coder)
	}

	dir := t.TempDir()
	s := &Server{Bin: bin, Models: DefaultModels(), Home: filepath.Join(dir, "home"),
		logPath: filepath.Join(dir, "server.log"), grace: o.grace}
	models := filepath.Join(dir, "models")
	s.modelsDir = models
	for _, d := range []string{s.Home, models} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("realollama: %v", err)
		}
	}

	t0 := time.Now()
	files, err := tinymodel.Generate(filepath.Join(dir, "files"), 1)
	if err != nil {
		t.Fatalf("realollama: %v", err)
	}
	s.Files, s.Timings.Generate = files, time.Since(t0)

	// A port picked free can be taken before the server binds it: try a few.
	for attempt := 1; ; attempt++ {
		err = s.launch(t, models, o)
		if err == nil {
			break
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			t.Fatalf("realollama: %v\n%s", err, s.logTail(40))
		}
	}

	if o.createModels {
		t0 = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := s.CreateModels(ctx); err != nil {
			t.Fatalf("realollama: %v\n%s", err, s.logTail(40))
		}
		s.Timings.Create = time.Since(t0)
	}
	if o.trained {
		s.createTrained(t, trainedDir)
	}
	if len(o.coder) > 0 {
		s.createCoder(t, coderPaths, o.coder)
	}
	t.Logf("realollama: ollama %s at %s (pid %d): generate %v, ready %v, create %v, create trained %v, create coder %v",
		s.Version, s.URL, s.proc.pid(), s.Timings.Generate.Round(time.Millisecond),
		s.Timings.Ready.Round(time.Millisecond), s.Timings.Create.Round(time.Millisecond),
		s.Timings.CreateTrained.Round(time.Millisecond), s.Timings.CreateCoder.Round(time.Millisecond))
	return s
}

var errPortTaken = errors.New("port taken")

// launch starts `ollama serve` on a fresh port and waits until it answers. On failure the
// process group is already stopped.
func (s *Server) launch(t testing.TB, models string, o options) error {
	t.Helper()
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Host = net.JoinHostPort("127.0.0.1", port)
	s.URL = "http://" + s.Host
	s.env = serverEnv(os.Environ(), s.Host, s.Home, models, o.env)

	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("server log: %w", err)
	}
	defer logf.Close() // the child holds its own copy
	cmd := exec.Command(s.Bin, "serve")
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = s.env, logf, logf, s.Home

	t0 := time.Now()
	proc, err := startProcess(cmd)
	if err != nil {
		return fmt.Errorf("start %s serve: %w", s.Bin, err)
	}
	s.proc = proc
	s.stop = sync.OnceValue(func() error { return proc.stop(s.grace) })
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("realollama: %v", err)
		}
		if t.Failed() {
			t.Logf("realollama: server log (%s), last lines:\n%s", s.logPath, s.logTail(60))
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), o.startTimeout)
	defer cancel()
	s.Version, err = s.waitReady(ctx)
	if err != nil {
		stopErr := s.Stop()
		if strings.Contains(s.logTail(20), "address already in use") {
			return errPortTaken
		}
		return errors.Join(err, stopErr)
	}
	s.Timings.Ready = time.Since(t0)
	return nil
}

// waitReady polls /api/version until it answers, the server exits or ctx ends.
func (s *Server) waitReady(ctx context.Context) (string, error) {
	client := s.Client()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := client.Version(ctx)
		if err == nil {
			return v, nil
		}
		select {
		case <-s.proc.done:
			return "", fmt.Errorf("%s serve exited before answering: %v", s.Bin, s.proc.err)
		case <-ctx.Done():
			return "", fmt.Errorf("%s serve not answering at %s: %w (last error: %v)", s.Bin, s.URL, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// Client returns an Ollama API client for this server.
func (s *Server) Client() *api.Client {
	u, _ := url.Parse(s.URL) // built by launch from a loopback host and port
	return api.NewClient(u, &http.Client{})
}

// PID is the server's process id (and process group id).
func (s *Server) PID() int { return s.proc.pid() }

// Stop stops the server and every process it spawned, and waits for them. Start registers
// it with t.Cleanup; calling it earlier (to test a server that went away) is safe.
func (s *Server) Stop() error {
	if s.stop == nil {
		return nil
	}
	return s.stop()
}

// Log returns what the server has written to stdout and stderr so far. Truncation of long
// prompts, for one, is reported only here.
func (s *Server) Log() string {
	data, _ := os.ReadFile(s.logPath)
	return string(data)
}

// logTail returns the last n lines of the server log.
func (s *Server) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(s.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// serverEnv is base without any OLLAMA_* or HOME entries, plus the harness's own settings
// and the caller's extras: a developer's own Ollama settings must not leak into the tests.
func serverEnv(base []string, host, home, models string, extra map[string]string) []string {
	var env []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OLLAMA_") || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return append(env, "OLLAMA_HOST="+host, "OLLAMA_MODELS="+models, "HOME="+home)
}

// freePort asks the kernel for an unused loopback port.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}
