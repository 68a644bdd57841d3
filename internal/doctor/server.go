package doctor

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// The doctor's "ollama server" line: how the Ollama server the primary role talks to was
// built, when it runs on this machine, and how fast it reads a prompt and writes a reply,
// measured apart. A CPU backend built without the CPU's vector instructions is 8–20× slower
// (docs/testing-real-ollama.md), and on a CPU prompt reading, not writing, is most of a
// run's time: its prompts are thousands of tokens, its replies hundreds.

// serverProbeWords makes the probe's prompt a few hundred tokens: long enough for the prompt
// speed to mean something, short enough for a slow CPU.
const serverProbeWords = 200

// ollamaServerCheck is nil when the primary role is not on Ollama.
func ollamaServerCheck(ctx context.Context, cfg *config.Config) *Check {
	role, err := cfg.ResolvedRole(config.RolePrimary)
	if err != nil || role.Provider != config.ProviderOllama {
		return nil
	}
	u, err := url.Parse(role.BaseURL)
	if err != nil {
		return nil
	}
	var parts []string
	status, fix := "ok", ""
	build := "how it was built is unknown (it does not run on this machine, or not as a process lemmings can read)"
	if exe, pid, ok := localServer(u); ok {
		b := describeOllamaBuild(exe)
		build = fmt.Sprintf("%s (pid %d) %s", exe, pid, b.text)
		if b.scalar {
			status = "warn"
			fix = "an Ollama built for this CPU is 8-20x faster: OLLAMA_REBUILD=1 make ollama in lemmings' checkout (scripts/ollama.sh tries -march=native first; build.txt beside the binary says why each faster step failed), or the release from ollama.com"
		}
	}
	c := api.NewClient(u, &http.Client{})
	if v, err := c.Version(ctx); err == nil {
		parts = append(parts, "ollama "+v+" at "+u.Host)
	}
	parts = append(parts, build)

	start := time.Now()
	r, err := probeSpeeds(ctx, c, role.Model)
	switch {
	case err != nil && ctx.Err() != nil:
		parts = append(parts, fmt.Sprintf("%s gave no reply to a prompt of a few hundred tokens in %s: too slow to measure", role.Model, time.Since(start).Round(time.Second)))
	case err != nil:
		parts = append(parts, fmt.Sprintf("speed not measured: %s", causeOf(err)))
	default:
		parts = append(parts, fmt.Sprintf("%s reads a prompt at %s and writes at %s (%d prompt tokens, %d generated)", role.Model,
			rate(r.PromptEvalCount, r.PromptEvalDuration), rate(r.EvalCount, r.EvalDuration), r.PromptEvalCount, r.EvalCount))
	}
	return &Check{"ollama server", status, strings.Join(parts, "; "), fix}
}

// rate is "N tokens/s", or "an unknown speed" when the server gave no duration.
func rate(n int, d time.Duration) string {
	if n <= 0 || d <= 0 {
		return "an unknown speed"
	}
	return fmt.Sprintf("%.1f tokens/s", float64(n)/d.Seconds())
}

// probeSpeeds sends one prompt of a few hundred tokens that no cache holds (it starts with
// the time) and asks for 32 tokens.
func probeSpeeds(ctx context.Context, c *api.Client, model string) (api.ChatResponse, error) {
	words := make([]string, 0, serverProbeWords)
	for i := 0; len(words) < serverProbeWords; i++ {
		words = append(words, "alpha", "beta", "gamma", "delta", strconv.Itoa(i))
	}
	noStream := false
	var r api.ChatResponse
	err := c.Chat(ctx, &api.ChatRequest{Model: model, Stream: &noStream,
		Messages: []api.Message{
			{Role: "system", Content: prompts.MarkerDoctor + ". Answer with the numbers only."},
			{Role: "user", Content: time.Now().Format(time.RFC3339Nano) + " " + strings.Join(words, " ") + "\nCount from 1 to 30, separated by spaces."},
		},
		Options: map[string]any{"temperature": 0, "num_predict": 32, "seed": 1}},
		func(x api.ChatResponse) error { r = x; return nil })
	return r, err
}

// ollamaBuild is what the doctor can say of a server binary.
type ollamaBuild struct {
	text   string
	scalar bool // built without vector instructions
}

// describeOllamaBuild reads, in order: build.txt beside the binary (scripts/ollama.sh writes
// it), the C flags in the binary's Go build info, a release's per-CPU backend libraries.
func describeOllamaBuild(exe string) ollamaBuild {
	if kv, steps := readBuildTxt(filepath.Join(filepath.Dir(exe), "build.txt")); kv["cflags"] != "" {
		b := ollamaBuild{text: "built by scripts/ollama.sh with " + kv["cflags"]}
		switch how := kv["detected"]; {
		case strings.HasPrefix(how, "native"):
			names := vectorNames(kv["vector"])
			if strings.Contains(how, "without AMX") {
				names = strings.TrimPrefix(strings.ReplaceAll(names, ", AMX", ""), "AMX, ")
			}
			b.text += " (" + how + ": this CPU's instructions: " + names + ")"
		case how != "":
			b.text += " (" + how + ")"
		}
		b.scalar = !vectorFlags(kv["cflags"])
		if b.scalar {
			b.text += ": no vector instructions, the CPU backend is scalar"
		}
		// The ladder's steps that did not link: why this build is not a faster one.
		if len(steps) > 0 {
			b.text += "; " + strings.Join(steps, "; ")
		}
		return b
	}
	if info, err := buildinfo.ReadFile(exe); err == nil && info.Path == "github.com/ollama/ollama" {
		var cflags string
		for _, s := range info.Settings {
			if s.Key == "CGO_CFLAGS" {
				cflags = s.Value
			}
		}
		if libs, _ := filepath.Glob(filepath.Join(filepath.Dir(exe), "..", "lib", "ollama", "libggml-cpu-*.so")); len(libs) > 0 {
			return ollamaBuild{text: fmt.Sprintf("a release build: %d CPU backends, the best for this CPU chosen at start", len(libs))}
		}
		if !vectorFlags(cflags) {
			return ollamaBuild{text: fmt.Sprintf("built from source with C flags %q: no vector instructions, the CPU backend is scalar", cflags), scalar: true}
		}
		return ollamaBuild{text: fmt.Sprintf("built from source with C flags %q", cflags)}
	}
	return ollamaBuild{text: "(how it was built is unknown)"}
}

// vectorFlags says whether C flags ask for vector instructions beyond the x86-64 baseline.
func vectorFlags(cflags string) bool {
	for _, f := range strings.Fields(cflags) {
		if strings.HasPrefix(f, "-march=") || strings.HasPrefix(f, "-mcpu=") || strings.HasPrefix(f, "-mavx") || f == "-mfma" || f == "-mf16c" {
			return true
		}
	}
	return false
}

// vectorNames turns cpuinfo's flags ("avx avx2 avx512f fma") into the names users know.
func vectorNames(flags string) string {
	names := map[string]string{"avx": "AVX", "avx2": "AVX2", "avx512f": "AVX-512", "fma": "FMA", "f16c": "F16C",
		"amx_tile": "AMX", "asimd": "NEON", "sve": "SVE", "sve2": "SVE2"}
	var out []string
	for _, f := range strings.Fields(flags) {
		if n, ok := names[f]; ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "none found"
	}
	return strings.Join(out, ", ")
}

// readBuildTxt returns build.txt's "key: value" lines, and apart, its "failed:" and "skipped:"
// lines (one per ladder step, in order) as they are written ("failed: STEP (FLAGS): WHY").
func readBuildTxt(path string) (kv map[string]string, steps []string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	kv = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "failed" || k == "skipped" {
			steps = append(steps, k+": "+v)
			continue
		}
		kv[k] = v
	}
	return kv, steps
}

// localServer finds the process listening on u's port when u is a loopback address, and its
// executable: through /proc (Linux); elsewhere, or for another user's process, ok is false.
func localServer(u *url.URL) (exe string, pid int, ok bool) {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "11434"
	}
	if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
		return "", 0, false
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, false
	}
	inodes := listeningInodes(p)
	if len(inodes) == 0 {
		return "", 0, false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		link, err := os.Readlink(fd)
		if err != nil || !inodes[link] {
			continue
		}
		dir := filepath.Dir(filepath.Dir(fd))
		exe, err := os.Readlink(filepath.Join(dir, "exe"))
		if err != nil {
			return "", 0, false
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		return exe, pid, true
	}
	return "", 0, false
}

// listeningInodes are the sockets listening on port, as "socket:[INODE]" (how /proc/PID/fd
// links name them), from /proc/net/tcp and tcp6.
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(p) == port {
				out["socket:["+f[9]+"]"] = true
			}
		}
	}
	return out
}
