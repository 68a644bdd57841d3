#!/usr/bin/env bash
# Builds the real Ollama server used by the real-server tests (docs/testing-real-ollama.md).
#
# v0.11.4 is the newest release that builds from the Go module proxy alone (later module zips
# lack llama.cpp headers kept under vendor/). The binary goes to .tools/ollama/ollama (git-ignored)
# and is reused while it is the right version. The project's go.mod is never touched: the build
# runs as `go install pkg@version` from a scratch directory outside any module.
#
# ggml's CPU backend is compiled by cgo with the flags given here and nothing else: without the
# CPU's vector instructions it is scalar, 8-20x slower (Qwen2.5-Coder-0.5B on 2 cores: 4.2 tok/s
# in and 3.7 out scalar, 91 in and 28 out with -march=native). So the build asks the compiler for
# this CPU's instructions (-march=native), falls back to the AVX2/FMA/F16C flags /proc/cpuinfo
# lists when the compiler cannot detect the CPU, and to a scalar build only when neither works.
# Which one was made is written to $dest/build.txt (lemmings doctor reads it) and is part of the
# binary's build info, so a scalar build left by an older script is rebuilt.
#
# Environment: OLLAMA_VERSION (default 0.11.4), OLLAMA_TOOLS_DIR (default <repo>/.tools/ollama),
# GO (default go), OLLAMA_CPU_FLAGS (the C/C++ flags to build with, instead of detecting them).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
version="${OLLAMA_VERSION:-0.11.4}"
dest="${OLLAMA_TOOLS_DIR:-$root/.tools/ollama}"
go="${GO:-go}"
bin="$dest/ollama"
pkg="github.com/ollama/ollama"
ldflags="-X $pkg/version.Version=$version"
cc="${CC:-gcc}"

# cpu_flags prints the C flags for this CPU and, on stderr-free stdout's second line, how they were
# chosen: "native", "cpuinfo" or "portable".
cpu_flags() {
  if [ -n "${OLLAMA_CPU_FLAGS:-}" ]; then
    printf '%s\nset by OLLAMA_CPU_FLAGS\n' "$OLLAMA_CPU_FLAGS"
    return
  fi
  if "$cc" -march=native -E -x c /dev/null -o /dev/null >/dev/null 2>&1; then
    printf '%s\nnative\n' "-O3 -march=native"
    return
  fi
  local flags="" f
  if [ -r /proc/cpuinfo ]; then
    for f in avx avx2 fma f16c; do
      grep -qw "$f" /proc/cpuinfo && flags="$flags -m$f"
    done
  fi
  if [ -n "$flags" ]; then
    printf '%s\ncpuinfo\n' "-O3$flags"
  else
    printf '%s\nportable\n' "-O2"
  fi
}
cflags_and_how="$(cpu_flags)"
cflags="$(sed -n 1p <<<"$cflags_and_how")"
how="$(sed -n 2p <<<"$cflags_and_how")"

# is_current succeeds when $bin was built from $pkg@v$version with the version stamped in.
# `go version -m` reads the build info embedded in the binary without running it.
is_current() {
  [ -x "$bin" ] || return 1
  local info
  info="$("$go" version -m "$bin" 2>/dev/null)" || return 1
  grep -qE "^[[:space:]]+mod[[:space:]]+$pkg[[:space:]]+v$version([[:space:]]|$)" <<<"$info" || return 1
  grep -qF -- "$ldflags" <<<"$info" || return 1
  # The build info records the cgo flags: a binary built for other flags (or scalar) is rebuilt.
  grep -qE "^[[:space:]]+build[[:space:]]+CGO_CFLAGS=\"?$cflags\"?$" <<<"$info" || return 1
  [ -f "$dest/build.txt" ] || return 1
}

if is_current; then
  echo "ollama v$version already built: $bin"
  exit 0
fi

command -v gcc >/dev/null 2>&1 || { echo "ollama.sh: gcc is needed (cgo)" >&2; exit 1; }
command -v g++ >/dev/null 2>&1 || { echo "ollama.sh: g++ is needed (cgo)" >&2; exit 1; }

mkdir -p "$dest"
# Build into a scratch GOBIN beside the destination, then rename: an interrupted build never
# leaves a half-written binary where the tests look for one.
stage="$(mktemp -d "$dest/.build.XXXXXX")"
scratch="$(mktemp -d)"
trap 'rm -rf "$stage" "$scratch"' EXIT

echo "building ollama v$version into $dest with $cflags ($how; cold: ~3 minutes on 2 cores)..."
start=$(date +%s)
(
  cd "$scratch"
  # GOFLAGS is cleared so a caller's -mod=… cannot apply; GOWORK=off keeps any go.work out.
  # llama.cpp's C/C++ is most of the build: without cgo's default -g it takes ~20% less CPU
  # (measured: 3m11s against 4m02s) and the binary is 40 MB instead of 54 MB.
  env GOFLAGS=-buildvcs=false GOWORK=off GO111MODULE=on CGO_ENABLED=1 GOBIN="$stage" \
    CGO_CFLAGS="$cflags" CGO_CXXFLAGS="$cflags" \
    "$go" install -ldflags "$ldflags" "$pkg@v$version"
)
mv -f "$stage/ollama" "$bin"
# What lemmings doctor reports about this build (docs/testing-real-ollama.md).
{
  echo "version: $version"
  echo "cflags: $cflags"
  echo "detected: $how"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
  echo "vector: $(grep -m1 -ow -E 'avx512f|avx2|avx|fma|f16c' /proc/cpuinfo 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//')"
} >"$dest/build.txt.tmp" && mv -f "$dest/build.txt.tmp" "$dest/build.txt"
elapsed=$(( $(date +%s) - start ))

if ! is_current; then
  echo "ollama.sh: built $bin but its build info does not say v$version" >&2
  exit 1
fi
printf 'built ollama v%s in %dm%02ds: %s (%s)\n' "$version" $((elapsed / 60)) $((elapsed % 60)) \
  "$bin" "$(du -h "$bin" | cut -f1)"
