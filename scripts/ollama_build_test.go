package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scripts/ollama.sh's flags ladder, driven with a fake `go` (the script honours GO) that
// fails as the real cgo link of Ollama v0.11.4 does when the C flags turn on ggml's AMX path,
// and a CC that is the real gcc with -march=native read as -march=sapphirerapids: the AMX case
// on any x86-64 machine, in a second, without building the server.

// fakeGo ({BQ} is a backquote) answers `go version -m FILE` (the file holds the build info) and `go install`, which
// appends the flags it was given to $FAKE_GO_LOG and then fails or writes $GOBIN/ollama:
//   - like the real link when the flags define __AMX_INT8__ (asked of $CC): its words are
//     those of a real build with -march=sapphirerapids on a CPU without AMX;
//   - with a compile error when the flags match $FAKE_GO_FAIL_ON (an extended regexp);
//   - before compiling anything when FAKE_GO_OFFLINE=1 (the module download).
const fakeGo = `#!/usr/bin/env bash
set -u
case "$1" in
version)
  [ "$2" = -m ] && [ -f "$3" ] && cat "$3" ;;
install)
  mod="${4:?}"
  echo "$CGO_CFLAGS" >>"$FAKE_GO_LOG"
  if [ "${FAKE_GO_OFFLINE:-}" = 1 ]; then
    echo "go: $mod: Get \"http://127.0.0.1:9/$mod\": dial tcp 127.0.0.1:9: connect: connection refused" >&2
    exit 1
  fi
  if "$CC" $CGO_CFLAGS -dM -E -x c /dev/null | grep -q '^#define __AMX_INT8__ '; then
    echo "# github.com/ollama/ollama" >&2
    echo "/usr/local/go/pkg/tool/linux_amd64/link: running $CC failed: exit status 1" >&2
    echo "/usr/bin/ld: /tmp/go-link-1650462518/000092.o: in function \{BQ}ggml_backend_cpu_get_extra_buffers_type()':" >&2
    echo "ggml-cpu.cpp:(.text+0x7ad): undefined reference to \{BQ}ggml_backend_amx_buffer_type()'" >&2
    echo "/usr/bin/ld: ggml-cpu.cpp:(.text+0x7bb): undefined reference to \{BQ}ggml_backend_amx_buffer_type()'" >&2
    echo "collect2: error: ld returned 1 exit status" >&2
    exit 1
  fi
  if [ -n "${FAKE_GO_FAIL_ON:-}" ] && grep -qE -- "$FAKE_GO_FAIL_ON" <<<"$CGO_CFLAGS"; then
    echo "# github.com/ollama/ollama/llama" >&2
    echo "llama.cpp:42:1: error: inlining failed in call to 'always_inline' '_mm256_fmadd_ps': target specific option mismatch" >&2
    exit 1
  fi
  q="$CGO_CFLAGS"; [[ "$q" == *" "* ]] && q="\"$q\""
  printf '%s: go1.26\n\tpath\tgithub.com/ollama/ollama\n\tmod\tgithub.com/ollama/ollama\t%s\th1:x=\n\tbuild\t-ldflags="%s"\n\tbuild\tCGO_ENABLED=1\n\tbuild\tCGO_CFLAGS=%s\n' \
    "$GOBIN/ollama" "${mod#*@}" "$3" "$q" >"$GOBIN/ollama"
  chmod +x "$GOBIN/ollama" ;;
*) echo "fake go: $*" >&2; exit 2 ;;
esac
`

// sapphireCC is gcc on an AMX CPU: -march=native is Sapphire Rapids.
const sapphireCC = `#!/usr/bin/env bash
exec gcc "${@/#-march=native/-march=sapphirerapids}"
`

// sapphireCPUInfo is /proc/cpuinfo's first lines on a Sapphire Rapids VM.
const sapphireCPUInfo = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz
flags		: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c avx2 fma avx512f avx512_vnni amx_bf16 amx_tile amx_int8
`

type ollamaBuild struct {
	t    *testing.T
	dir  string // OLLAMA_TOOLS_DIR
	gLog string
	env  []string
}

func newOllamaBuild(t *testing.T, cc string) *ollamaBuild {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed: scripts/ollama.sh needs it, and so does this test")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ is not installed: scripts/ollama.sh needs it")
	}
	if out, err := exec.Command("gcc", "-march=sapphirerapids", "-E", "-x", "c", "/dev/null", "-o", "/dev/null").CombinedOutput(); err != nil {
		t.Skipf("this gcc cannot target -march=sapphirerapids (not x86-64, or older than gcc 11): %s", out)
	}
	tmp := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b := &ollamaBuild{t: t, dir: filepath.Join(tmp, "tools"), gLog: filepath.Join(tmp, "go.log")}
	b.env = append(os.Environ(),
		"GO="+write("go", strings.ReplaceAll(fakeGo, "{BQ}", "`"), 0o755),
		"CC="+write("cc", cc, 0o755),
		"CPUINFO="+write("cpuinfo", sapphireCPUInfo, 0o644),
		"ARCH=x86_64",
		"OLLAMA_TOOLS_DIR="+b.dir,
		"FAKE_GO_LOG="+b.gLog,
		"OLLAMA_CPU_FLAGS=", "OLLAMA_REBUILD=", "FAKE_GO_FAIL_ON=", "FAKE_GO_OFFLINE=",
	)
	return b
}

// run runs the script with extra environment and returns its output and exit code.
func (b *ollamaBuild) run(env ...string) (stdout, stderr string, code int) {
	b.t.Helper()
	cmd := exec.Command("./ollama.sh")
	cmd.Env = append(append([]string{}, b.env...), env...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// builds are the CGO_CFLAGS of every `go install` so far.
func (b *ollamaBuild) builds() []string {
	data, err := os.ReadFile(b.gLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func (b *ollamaBuild) buildTxt() string {
	data, err := os.ReadFile(filepath.Join(b.dir, "build.txt"))
	if err != nil {
		b.t.Fatal(err)
	}
	return string(data)
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestOllamaBuildOnAnAMXCPUStepsToNativeWithoutAMXAndIsNotRebuilt(t *testing.T) {
	b := newOllamaBuild(t, sapphireCC)
	out, errOut, code := b.run()
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	noAMX := "-O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
	eq(t, "builds", b.builds(), []string{"-O3 -march=native", noAMX})
	txt := b.buildTxt()
	for _, want := range []string{
		"version: 0.11.4\n",
		"cflags: " + noAMX + "\n",
		"detected: native without AMX\n",
		"failed: native (-O3 -march=native): ggml-cpu.cpp: undefined reference to `ggml_backend_amx_buffer_type()'\n",
		"cpu: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz\n",
		"vector: amx_bf16 amx_int8 amx_tile avx avx2 avx512f f16c fma\n",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("build.txt lacks %q:\n%s", want, txt)
		}
	}
	if !strings.Contains(errOut, "the native build failed: ggml-cpu.cpp: undefined reference to `ggml_backend_amx_buffer_type()'") {
		t.Errorf("the failed step is not said as it happens:\n%s", errOut)
	}
	if matches, _ := filepath.Glob(filepath.Join(b.dir, "build-*.log")); len(matches) != 0 {
		t.Errorf("a build that linked leaves failed steps' logs behind: %v", matches)
	}

	// The next run keeps the binary the second step made (it used to compare the binary with
	// the first step's flags and rebuild, failing, on every run).
	out, errOut, code = b.run()
	if code != 0 || len(b.builds()) != 2 || !strings.Contains(out, "already built") {
		t.Fatalf("second run: exit %d, builds %q\n%s%s", code, b.builds(), out, errOut)
	}
	// OLLAMA_REBUILD=1 walks the ladder again.
	if _, _, code = b.run("OLLAMA_REBUILD=1"); code != 0 || len(b.builds()) != 4 {
		t.Fatalf("OLLAMA_REBUILD=1: exit %d, builds %q", code, b.builds())
	}
}

// The flags the ladder's second step adds are the ones that turn AMX off on a real AMX CPU:
// the real compiler, asked for Sapphire Rapids, defines __AMX_TILE__ (which ggml-cpu keys its
// AMX path on, with __AMX_INT8__) and none of them with the script's -mno-amx-… flags.
func TestOllamaBuildNoAMXFlagsUndefineAMXForARealAMXCPU(t *testing.T) {
	newOllamaBuild(t, sapphireCC) // the skips
	script, err := os.ReadFile("ollama.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^noamx="([^"]+)"$`).FindSubmatch(script)
	if m == nil {
		t.Fatal(`ollama.sh has no noamx="…" line`)
	}
	macros := func(flags ...string) string {
		out, err := exec.Command("gcc", append(append([]string{"-O3"}, flags...), "-dM", "-E", "-x", "c", "/dev/null")...).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	amx := regexp.MustCompile(`(?m)^#define __AMX_\w+__ `)
	with := macros("-march=sapphirerapids")
	for _, want := range []string{"__AMX_TILE__", "__AMX_INT8__", "__AMX_BF16__", "__AVX512F__"} {
		if !strings.Contains(with, "#define "+want+" ") {
			t.Errorf("-march=sapphirerapids does not define %s", want)
		}
	}
	without := macros(append([]string{"-march=sapphirerapids"}, strings.Fields(string(m[1]))...)...)
	if got := amx.FindAllString(without, -1); len(got) != 0 {
		t.Errorf("-march=sapphirerapids %s still defines %q", m[1], got)
	}
	if !strings.Contains(without, "#define __AVX512F__ ") {
		t.Errorf("turning AMX off lost AVX-512, which the step is meant to keep")
	}
}

func TestOllamaBuildKeepsABinaryBuiltWithExplicitFlags(t *testing.T) {
	b := newOllamaBuild(t, "#!/bin/sh\nexec gcc \"$@\"\n")
	if out, errOut, code := b.run("OLLAMA_CPU_FLAGS=-O3 -mavx2 -mfma"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if txt := b.buildTxt(); !strings.Contains(txt, "cflags: -O3 -mavx2 -mfma\ndetected: set by OLLAMA_CPU_FLAGS\n") {
		t.Errorf("build.txt:\n%s", txt)
	}
	if out, errOut, code := b.run(); code != 0 || len(b.builds()) != 1 {
		t.Fatalf("a run without OLLAMA_CPU_FLAGS rebuilt (or failed): exit %d, builds %q\n%s%s", code, b.builds(), out, errOut)
	}
	if _, _, code := b.run("OLLAMA_CPU_FLAGS=-O3 -mavx2 -mfma"); code != 0 || len(b.builds()) != 1 {
		t.Fatalf("the same flags again rebuilt: exit %d, builds %q", code, b.builds())
	}
	if _, _, code := b.run("OLLAMA_CPU_FLAGS=-O2"); code != 0 || len(b.builds()) != 2 {
		t.Fatalf("other flags did not rebuild: exit %d, builds %q", code, b.builds())
	}
}

func TestOllamaBuildLadderEndsWithCPUInfoFlagsThenPortable(t *testing.T) {
	b := newOllamaBuild(t, sapphireCC)
	// Anything that names -march fails: the AVX/AVX2/FMA/F16C set from cpuinfo links.
	if out, errOut, code := b.run("FAKE_GO_FAIL_ON=-march"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	eq(t, "builds", b.builds(), []string{"-O3 -march=native", "-O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16", "-O3 -mavx -mavx2 -mfma -mf16c"})
	txt := b.buildTxt()
	if !strings.Contains(txt, "detected: cpuinfo\n") || strings.Count(txt, "\nfailed: ") != 2 ||
		!strings.Contains(txt, "failed: native without AMX (-O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16): llama.cpp:42:1: error: inlining failed") {
		t.Errorf("build.txt:\n%s", txt)
	}
	// Every vector flag fails: the portable build.
	b = newOllamaBuild(t, sapphireCC)
	if out, errOut, code := b.run("FAKE_GO_FAIL_ON=-m"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got := b.builds(); len(got) != 4 || got[3] != "-O2" {
		t.Errorf("builds %q", got)
	}
	if txt := b.buildTxt(); !strings.Contains(txt, "cflags: -O2\ndetected: portable\n") || strings.Count(txt, "\nfailed: ") != 3 {
		t.Errorf("build.txt:\n%s", txt)
	}
}

func TestOllamaBuildSkipsTheNoAMXStepWhereNativeHasNoAMX(t *testing.T) {
	// gcc as it is, for a CPU without AMX (-march=haswell stands for native).
	b := newOllamaBuild(t, "#!/usr/bin/env bash\nexec gcc \"${@/#-march=native/-march=haswell}\"\n")
	if out, errOut, code := b.run("FAKE_GO_FAIL_ON=-march=native$"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	eq(t, "builds", b.builds(), []string{"-O3 -march=native", "-O3 -mavx -mavx2 -mfma -mf16c"})
	if txt := b.buildTxt(); !strings.Contains(txt, "skipped: native without AMX: -O3 -march=native turns on no AMX here") {
		t.Errorf("build.txt:\n%s", txt)
	}
}

func TestOllamaBuildOnArm64TriesMcpuThenMarchThenPortable(t *testing.T) {
	// x86's gcc stands in for arm64's: it accepts -mcpu=native (as -mtune) and the fake go
	// decides which step fails.
	b := newOllamaBuild(t, "#!/bin/sh\nexec gcc \"$@\"\n")
	if out, errOut, code := b.run("ARCH=aarch64", "FAKE_GO_FAIL_ON=-mcpu=native"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	eq(t, "builds", b.builds(), []string{"-O3 -mcpu=native", "-O3 -march=native"})
	if txt := b.buildTxt(); !strings.Contains(txt, "detected: native (-march)\n") || !strings.Contains(txt, "arch: aarch64\n") {
		t.Errorf("build.txt:\n%s", txt)
	}
}

func TestOllamaBuildFailureSaysEachStepAndTheFix(t *testing.T) {
	b := newOllamaBuild(t, sapphireCC)
	out, errOut, code := b.run("FAKE_GO_FAIL_ON=.")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	if len(b.builds()) != 4 {
		t.Errorf("builds %q: every step should have been tried", b.builds())
	}
	for _, want := range []string{
		"no build of ollama v0.11.4 linked on this machine (x86_64):",
		"  failed: native (-O3 -march=native): ggml-cpu.cpp: undefined reference to `ggml_backend_amx_buffer_type()'",
		"  failed: portable (-O2): llama.cpp:42:1: error: inlining failed",
		"  the logs: " + b.dir + "/build-failed-*.log",
		"  fix: install a newer gcc and g++",
		"OLLAMA_CPU_FLAGS=-O2 always works",
		"install Ollama from ollama.com",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(b.dir, "ollama")); err == nil {
		t.Error("a failed build left a binary")
	}
	if _, err := os.Stat(filepath.Join(b.dir, "build.txt")); err == nil {
		t.Error("a failed build wrote build.txt")
	}
	if logs, _ := filepath.Glob(filepath.Join(b.dir, "build-failed-*.log")); len(logs) != 4 {
		t.Errorf("logs %v, want one per failed step", logs)
	}
}

func TestOllamaBuildThatFailsBeforeCompilingStopsTheLadder(t *testing.T) {
	b := newOllamaBuild(t, sapphireCC)
	_, errOut, code := b.run("FAKE_GO_OFFLINE=1")
	if code != 1 || len(b.builds()) != 1 {
		t.Fatalf("exit %d, builds %q: a download failure should end the ladder at once\n%s", code, b.builds(), errOut)
	}
	if !strings.Contains(errOut, "connection refused") || !strings.Contains(errOut, "fix: the build stopped before compiling anything: check the network to the Go module proxy") {
		t.Errorf("stderr:\n%s", errOut)
	}
}
