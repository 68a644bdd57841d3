#!/usr/bin/env bash
# Builds the real Ollama server used by the real-server tests (docs/testing-real-ollama.md).
#
# v0.11.4 is the newest release that builds from the Go module proxy alone (later module zips
# lack llama.cpp headers kept under vendor/). The binary goes to .tools/ollama/ollama (git-ignored)
# and is reused while it is the right version. The project's go.mod is never touched: the build
# runs as `go install pkg@version` from a scratch directory outside any module.
#
# Environment: OLLAMA_VERSION (default 0.11.4), OLLAMA_TOOLS_DIR (default <repo>/.tools/ollama),
# GO (default go).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
version="${OLLAMA_VERSION:-0.11.4}"
dest="${OLLAMA_TOOLS_DIR:-$root/.tools/ollama}"
go="${GO:-go}"
bin="$dest/ollama"
pkg="github.com/ollama/ollama"
ldflags="-X $pkg/version.Version=$version"

# is_current succeeds when $bin was built from $pkg@v$version with the version stamped in.
# `go version -m` reads the build info embedded in the binary without running it.
is_current() {
  [ -x "$bin" ] || return 1
  local info
  info="$("$go" version -m "$bin" 2>/dev/null)" || return 1
  grep -qE "^[[:space:]]+mod[[:space:]]+$pkg[[:space:]]+v$version([[:space:]]|$)" <<<"$info" || return 1
  grep -qF -- "$ldflags" <<<"$info" || return 1
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

echo "building ollama v$version into $dest (cold: ~3 minutes on 2 cores)..."
start=$(date +%s)
(
  cd "$scratch"
  # GOFLAGS is cleared so a caller's -mod=… cannot apply; GOWORK=off keeps any go.work out.
  # llama.cpp's C/C++ is most of the build: without cgo's default -g it takes ~20% less CPU
  # (measured: 3m11s against 4m02s) and the binary is 40 MB instead of 54 MB.
  env GOFLAGS=-buildvcs=false GOWORK=off GO111MODULE=on CGO_ENABLED=1 GOBIN="$stage" \
    CGO_CFLAGS="${CGO_CFLAGS:--O2}" CGO_CXXFLAGS="${CGO_CXXFLAGS:--O2}" \
    "$go" install -ldflags "$ldflags" "$pkg@v$version"
)
mv -f "$stage/ollama" "$bin"
elapsed=$(( $(date +%s) - start ))

if ! is_current; then
  echo "ollama.sh: built $bin but its build info does not say v$version" >&2
  exit 1
fi
printf 'built ollama v%s in %dm%02ds: %s (%s)\n' "$version" $((elapsed / 60)) $((elapsed % 60)) \
  "$bin" "$(du -h "$bin" | cut -f1)"
