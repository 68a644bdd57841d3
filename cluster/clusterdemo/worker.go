package clusterdemo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// worker is one box: a lemmings worker child process with its own
// configuration home, repository cache and log file.
type worker struct {
	name, cache, logPath string
	cmd                  *exec.Cmd
	done                 chan struct{}
}

// startWorker starts lemmings worker for the box called name. The child
// has its own process group (the demo kills the group, as a box dying takes
// its git and gate processes with it) and dies with the demo.
func startWorker(exe, root, name, config string) (*worker, error) {
	home := filepath.Join(root, name+"-home")
	w := &worker{name: name, cache: filepath.Join(root, name), logPath: filepath.Join(root, name+".log"), done: make(chan struct{})}
	if err := os.MkdirAll(filepath.Join(home, "lemmings"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, "lemmings", "config.yaml"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(w.cache, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(w.logPath)
	if err != nil {
		return nil, err
	}
	w.cmd = exec.Command(exe, "worker", "--name", name, "--health-interval", "500ms")
	w.cmd.Dir = w.cache
	w.cmd.Env = childEnv(home)
	w.cmd.Stdout, w.cmd.Stderr = logf, logf
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the starting thread ends: keep it for the child's life.
		runtime.LockOSThread()
		if err := w.cmd.Start(); err != nil {
			started <- err
			logf.Close()
			close(w.done)
			return
		}
		started <- nil
		_ = w.cmd.Wait()
		logf.Close()
		close(w.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return w, nil
}

// childEnv is this process's environment without lemmings' and the model
// servers' settings (each box reads its own configuration home).
func childEnv(home string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LEMMINGS_") || strings.HasPrefix(kv, "OLLAMA_") || strings.HasPrefix(kv, "OPENROUTER_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "XDG_CONFIG_HOME="+home)
}

func (w *worker) pid() int { return w.cmd.Process.Pid }

// waitStarted waits for the worker's "worker started" line.
func (w *worker) waitStarted(ctx context.Context) error {
	for {
		data, _ := os.ReadFile(w.logPath)
		if bytes.Contains(data, []byte("worker started")) {
			return nil
		}
		select {
		case <-w.done:
			return fmt.Errorf("%s exited at start:\n%s", w.name, tail(data))
		case <-ctx.Done():
			return fmt.Errorf("%s did not start: %w\n%s", w.name, ctx.Err(), tail(data))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// kill is the box dying: SIGKILL to its whole process group.
func (w *worker) kill() {
	select {
	case <-w.done:
		return // gone already: its group id may be another's now
	default:
	}
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	<-w.done
}

// stop asks the worker to stop (SIGTERM: its runs stop at their next step)
// and kills it if it has not within 10 seconds.
func (w *worker) stop() {
	select {
	case <-w.done:
		return
	default:
	}
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		w.kill()
	}
}
