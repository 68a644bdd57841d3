package doctor

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/config"
)

// The doctor says how lemmings' own Ollama build was made, from the build.txt that
// scripts/ollama.sh writes beside the binary, and warns about a scalar one.
func TestDescribeOllamaBuild(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ollama")
	if err := os.WriteFile(exe, []byte("not a Go binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "build.txt"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("version: 0.11.4\ncflags: -O3 -march=native\ndetected: native\ncpu: AMD EPYC\nvector: avx avx2 avx512f f16c fma\n")
	b := describeOllamaBuild(exe)
	if b.scalar || b.text != "built by scripts/ollama.sh with -O3 -march=native (native: this CPU's instructions: AVX, AVX2, AVX-512, F16C, FMA)" {
		t.Errorf("native: %+v", b)
	}
	// On an AMX CPU the native step fails to link; the second step's build and why.
	write("version: 0.11.4\ncflags: -O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16\ndetected: native without AMX\n" +
		"failed: native (-O3 -march=native): ggml-cpu.cpp: undefined reference to `ggml_backend_amx_buffer_type()'\n" +
		"vector: amx_bf16 amx_int8 amx_tile avx avx2 avx512f f16c fma\n")
	if b := describeOllamaBuild(exe); b.scalar || b.text != "built by scripts/ollama.sh with -O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 "+
		"(native without AMX: this CPU's instructions: AVX, AVX2, AVX-512, F16C, FMA); "+
		"failed: native (-O3 -march=native): ggml-cpu.cpp: undefined reference to `ggml_backend_amx_buffer_type()'" {
		t.Errorf("native without AMX: %+v", b)
	}
	write("version: 0.11.4\ncflags: -O3 -mavx -mavx2 -mfma\ndetected: cpuinfo\n")
	if b := describeOllamaBuild(exe); b.scalar || !strings.Contains(b.text, "-mavx2 -mfma (cpuinfo)") {
		t.Errorf("cpuinfo: %+v", b)
	}
	write("version: 0.11.4\ncflags: -O2\ndetected: portable\nfailed: native (-O3 -march=native): cc1: error: bad value\nskipped: native without AMX: no AMX\n")
	if b := describeOllamaBuild(exe); !b.scalar || !strings.HasSuffix(b.text, "scalar; failed: native (-O3 -march=native): cc1: error: bad value; skipped: native without AMX: no AMX") {
		t.Errorf("portable: %+v", b)
	}
	if err := os.Remove(filepath.Join(dir, "build.txt")); err != nil {
		t.Fatal(err)
	}
	if b := describeOllamaBuild(exe); b.scalar || b.text != "(how it was built is unknown)" {
		t.Errorf("no build.txt, no build info: %+v", b)
	}
}

// The server's process is found by the port it listens on.
func TestLocalServerFindsTheListeningProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	u := &url.URL{Scheme: "http", Host: l.Addr().String()}
	exe, pid, ok := localServer(u)
	if !ok || pid != os.Getpid() || exe != self {
		t.Errorf("localServer(%s) = %q, %d, %v; want %q, %d", u, exe, pid, ok, self, os.Getpid())
	}
	if _, _, ok := localServer(&url.URL{Scheme: "http", Host: "192.0.2.1:" + u.Port()}); ok {
		t.Error("a server on another machine was described")
	}
	l.Close()
	if _, _, ok := localServer(u); ok {
		t.Error("a closed port was described")
	}
}

// A server too slow to answer the probe within the doctor's time is said to be so, not
// reported as a failed request.
func TestOllamaServerCheckSaysASlowServerIsTooSlow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/version" {
			fmt.Fprint(w, `{"version":"0.11.4"}`)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body) // the server notices the client leave only after the body
		<-r.Context().Done()
	}))
	defer srv.Close()
	cfg := config.Default()
	cfg.Ollama.Host = srv.URL
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := ollamaServerCheck(ctx, cfg)
	if c == nil || !strings.Contains(c.Detail, "ollama 0.11.4 at ") || !strings.Contains(c.Detail, "gave no reply to a prompt of a few hundred tokens in") ||
		!strings.HasSuffix(c.Detail, "too slow to measure") {
		t.Errorf("check %+v", c)
	}
}
