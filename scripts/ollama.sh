#!/usr/bin/env bash
# Builds the real Ollama server used by the real-server tests (docs/testing-real-ollama.md) and by
# make demo-real and make local-model.
#
# v0.11.4 is the newest release that builds from the Go module proxy alone (later module zips
# lack llama.cpp headers kept under vendor/). The binary goes to .tools/ollama/ollama (git-ignored)
# and is reused while it is the right version. The project's go.mod is never touched: the build
# runs as `go install pkg@version` from a scratch directory outside any module.
#
# ggml's CPU backend is compiled by cgo with the flags given here and nothing else: without the
# CPU's vector instructions it is scalar, 8-20x slower (docs/testing-real-ollama.md). So the
# build tries a ladder of flags, fastest first, and takes the first that links:
#   x86-64: -march=native; -march=native without AMX (ggml's AMX path is not compiled by cgo, so
#           on a CPU with AMX the native build fails to link: ggml_backend_amx_buffer_type); the
#           AVX/AVX2/FMA/F16C flags /proc/cpuinfo lists; portable -O2 (scalar).
#   arm64:  -mcpu=native; -march=native; portable -O2.
# A step the compiler refuses, or that cannot differ from the last (no AMX to turn off), is
# skipped without a build. What was built and why (each failed step's reason) is written to
# $dest/build.txt, which lemmings doctor shows. A binary this script built is kept by later runs,
# whichever step made it; OLLAMA_CPU_FLAGS naming other flags, or OLLAMA_REBUILD=1, rebuilds.
#
# Environment: OLLAMA_VERSION (default 0.11.4), OLLAMA_TOOLS_DIR (default <repo>/.tools/ollama),
# GO (default go), CC (default gcc), OLLAMA_CPU_FLAGS (the C/C++ flags to build with: the ladder
# is not tried), OLLAMA_REBUILD=1 (build even when the binary is current). For tests: CPUINFO
# (default /proc/cpuinfo) and ARCH (default `uname -m`).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
version="${OLLAMA_VERSION:-0.11.4}"
dest="${OLLAMA_TOOLS_DIR:-$root/.tools/ollama}"
go="${GO:-go}"
bin="$dest/ollama"
pkg="github.com/ollama/ollama"
ldflags="-X $pkg/version.Version=$version"
cc="${CC:-gcc}"
cpuinfo="${CPUINFO:-/proc/cpuinfo}"
arch="${ARCH:-$(uname -m)}"
noamx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

# binary_cflags prints the CGO_CFLAGS recorded in $bin's build info (`go version -m` reads it
# without running the binary); nothing when it cannot be read.
binary_cflags() {
  "$go" version -m "$bin" 2>/dev/null |
    sed -n -E 's/^[[:space:]]+build[[:space:]]+CGO_CFLAGS=//p' | sed -E 's/^"(.*)"$/\1/' | head -1
}

# is_current succeeds when $bin was built from $pkg@v$version with the version stamped in, by
# this script (build.txt names the same flags as the binary), with OLLAMA_CPU_FLAGS' flags when
# they are set. Whichever ladder step made it, it is kept: rebuilding would walk the same ladder.
is_current() {
  [ "${OLLAMA_REBUILD:-}" != 1 ] || return 1
  [ -x "$bin" ] && [ -f "$dest/build.txt" ] || return 1
  local info built
  info="$("$go" version -m "$bin" 2>/dev/null)" || return 1
  grep -qE "^[[:space:]]+mod[[:space:]]+$pkg[[:space:]]+v$version([[:space:]]|$)" <<<"$info" || return 1
  grep -qF -- "$ldflags" <<<"$info" || return 1
  built="$(sed -n 's/^cflags: //p' "$dest/build.txt" | head -1)"
  [ "$(binary_cflags)" = "$built" ] || return 1
  [ -z "${OLLAMA_CPU_FLAGS:-}" ] || [ "$OLLAMA_CPU_FLAGS" = "$built" ] || return 1
}

if is_current; then
  echo "ollama v$version already built: $bin ($(sed -n 's/^detected: //p' "$dest/build.txt" | head -1): $(binary_cflags))"
  exit 0
fi

for tool in "$cc" g++; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "ollama.sh: $tool is needed to build the server (cgo compiles llama.cpp's C and C++)" >&2
    echo "  fix: install gcc and g++ (Debian, Ubuntu: apt-get install gcc g++), or install Ollama from ollama.com and point OLLAMA_HOST at it" >&2
    exit 1
  }
done

accepts() { "$cc" $1 -E -x c /dev/null -o /dev/null >/dev/null 2>&1; }
# grep reads all (no -q): under pipefail an early exit would fail the compiler with SIGPIPE.
defines_amx() { "$cc" $1 -dM -E -x c /dev/null 2>/dev/null | grep -E '^#define __AMX_(TILE|INT8|BF16)__ ' >/dev/null; }

# The ladder: "name|flags" lines, fastest first.
ladder=()
if [ -n "${OLLAMA_CPU_FLAGS:-}" ]; then
  ladder=("set by OLLAMA_CPU_FLAGS|$OLLAMA_CPU_FLAGS")
else
  case "$arch" in
    x86_64 | amd64)
      ladder+=("native|-O3 -march=native" "native without AMX|-O3 -march=native $noamx")
      simd=""
      if [ -r "$cpuinfo" ]; then
        for f in avx avx2 fma f16c; do
          grep -qw "$f" "$cpuinfo" && simd="$simd -m$f"
        done
      fi
      [ -z "$simd" ] || ladder+=("cpuinfo|-O3$simd")
      ;;
    aarch64 | arm64) ladder+=("native|-O3 -mcpu=native" "native (-march)|-O3 -march=native") ;;
    *) ladder+=("native|-O3 -march=native") ;;
  esac
  ladder+=("portable|-O2")
fi

mkdir -p "$dest"
# Build into a scratch GOBIN beside the destination, then rename: an interrupted build never
# leaves a half-written binary where the tests look for one.
stage="$(mktemp -d "$dest/.build.XXXXXX")"
scratch="$(mktemp -d)"
trap 'rm -rf "$stage" "$scratch"' EXIT

# reason prints one line saying why the build logged in $1 failed: the linker's first complaint,
# else the compiler's, else the log's last line (the compiler's warnings come before either).
reason() {
  local line="" re
  for re in 'undefined reference' 'error:|fatal|signal: killed'; do
    [ -n "$line" ] || line="$(grep -m1 -E "$re" "$1" || true)"
  done
  [ -n "$line" ] || line="$(grep -v '^[[:space:]]*$' "$1" | tail -1 || true)"
  line="$(sed -E -e 's/\(\.text[^)]*\)://' -e 's/[[:space:]]+/ /g' -e 's/^ //' <<<"$line")"
  printf '%s' "${line:0:300}"
}

notes=() # build.txt lines for the steps before the one that linked
built="" how="" prev="" attempted=0 compiled=0
start=$(date +%s)
for step in "${ladder[@]}"; do
  name="${step%%|*}" flags="${step#*|}"
  if ! accepts "$flags"; then
    notes+=("skipped: $name ($flags): $cc does not accept these flags")
    continue
  fi
  if [ "$name" = "native without AMX" ] && ! defines_amx "$prev"; then
    notes+=("skipped: $name: $prev turns on no AMX here, so the build would be the same")
    continue
  fi
  prev="$flags" attempted=1
  log="$dest/build-step.log"
  echo "building ollama v$version into $dest with $flags ($name; cold: ~3 minutes on 2 cores)..."
  rc=0
  (
    cd "$scratch"
    # GOFLAGS is cleared so a caller's -mod=… cannot apply; GOWORK=off keeps any go.work out.
    # llama.cpp's C/C++ is most of the build: without cgo's default -g it takes ~20% less CPU
    # (measured: 3m11s against 4m02s) and the binary is 40 MB instead of 54 MB.
    env GOFLAGS=-buildvcs=false GOWORK=off GO111MODULE=on CGO_ENABLED=1 GOBIN="$stage" CC="$cc" \
      CGO_CFLAGS="$flags" CGO_CXXFLAGS="$flags" \
      "$go" install -ldflags "$ldflags" "$pkg@v$version"
  ) >"$log" 2>&1 || rc=$?
  if [ "$rc" = 0 ] && [ -x "$stage/ollama" ]; then
    built="$flags" how="$name"
    break
  fi
  why="$(reason "$log")"
  notes+=("failed: $name ($flags): ${why:-exit $rc}")
  echo "ollama.sh: the $name build failed: ${why:-exit $rc}" >&2
  cp -f "$log" "$dest/build-failed-$(tr ' ()' '-' <<<"$name" | tr -s - | sed 's/-$//').log"
  # Go prints "# package" before a package's compiler or linker errors. Without one the build
  # failed before compiling (the module download, the disk): other flags would fail the same.
  if ! grep -q '^# ' "$log"; then
    break
  fi
  compiled=1
done
rm -f "$dest/build-step.log"

if [ -z "$built" ]; then
  {
    echo "ollama.sh: no build of ollama v$version linked on this machine ($arch):"
    for n in "${notes[@]}"; do echo "  $n"; done
    echo "  the logs: $dest/build-failed-*.log"
    if [ "$attempted" = 0 ]; then
      echo "  fix: $cc refused every step's flags: install gcc and g++ that can build for this CPU, or set OLLAMA_CPU_FLAGS to flags $cc accepts (OLLAMA_CPU_FLAGS=-O2 always works, slowly)"
    elif [ "$compiled" = 0 ]; then
      echo "  fix: the build stopped before compiling anything: check the network to the Go module proxy (GOPROXY), the disk space and \`$go version\`, then run scripts/ollama.sh again"
    else
      echo "  fix: install a newer gcc and g++ (the logs name what the compiler could not do), or set OLLAMA_CPU_FLAGS to flags this compiler builds with (OLLAMA_CPU_FLAGS=-O2 always works, slowly), or install Ollama from ollama.com and point OLLAMA_HOST at it"
    fi
  } >&2
  exit 1
fi

mv -f "$stage/ollama" "$bin"
rm -f "$dest"/build-failed-*.log
# What lemmings doctor reports about this build (docs/testing-real-ollama.md).
{
  echo "version: $version"
  echo "cflags: $built"
  echo "detected: $how"
  for n in "${notes[@]}"; do echo "$n"; done
  echo "compiler: $("$cc" --version 2>/dev/null | head -1)"
  echo "arch: $arch"
  echo "cpu: $(grep -m1 -E '^(model name|Model|CPU part)' "$cpuinfo" 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
  echo "vector: $(grep -m1 -E '^(flags|Features)' "$cpuinfo" 2>/dev/null | cut -d: -f2- | tr ' ' '\n' |
    grep -x -E 'avx512f|avx2|avx|fma|f16c|amx_tile|amx_int8|amx_bf16|asimd|sve|sve2' | sort -u | tr '\n' ' ' | sed 's/ $//')"
} >"$dest/build.txt.tmp" && mv -f "$dest/build.txt.tmp" "$dest/build.txt"
elapsed=$(( $(date +%s) - start ))

if ! OLLAMA_REBUILD= is_current; then
  echo "ollama.sh: built $bin but its build info does not say v$version with $built" >&2
  exit 1
fi
printf 'built ollama v%s in %dm%02ds: %s (%s; %s: %s)\n' "$version" $((elapsed / 60)) $((elapsed % 60)) \
  "$bin" "$(du -h "$bin" | cut -f1)" "$how" "$built"
[ "${#notes[@]}" = 0 ] || printf '  %s\n' "${notes[@]}"
