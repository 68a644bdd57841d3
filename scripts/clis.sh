#!/usr/bin/env bash
# Installs the coding CLIs the real tests drive (codingcli, docs/backends.md) into .tools/clis/
# from the committed scripts/clis/package.json and package-lock.json: every package is pinned by
# version and integrity hash. Installed: Qwen Code (JavaScript, Node 20+) and Codex CLI (a native
# binary in a per-platform optional dependency, hence optional dependencies stay in). No install
# scripts run: neither CLI needs one.
#
# `npm install --no-save` with the committed lock, not `npm ci`: Qwen Code 0.24.4 names optional
# per-platform clipboard packages that were never published, so no lock npm writes for it passes
# `npm ci`'s sync check ("Missing: @teddyzhu/clipboard-darwin-arm64@ from lock file"). With the
# lock present npm installs exactly its versions and checks their integrity all the same.
#
# A second run finds the installed lock equal to the committed one and takes well under a
# second. A lock file keeps two concurrent runs (parallel make, two worktrees sharing .tools)
# from installing over each other.
#
# Environment: CLIS_DIR (default <repo>/.tools/clis), NPM (default npm).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/scripts/clis"
dest="${CLIS_DIR:-$root/.tools/clis}"
npm="${NPM:-npm}"

die() { echo "clis.sh: $*" >&2; exit 1; }
command -v "$npm" >/dev/null || die "$npm not found: install Node.js 20 or later (with npm)"

mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9

# Installed and current: the lock last installed equals the committed one.
if [ -f "$dest/.stamp" ] && cmp -s "$dest/.stamp" "$src/package-lock.json" && [ -d "$dest/node_modules/.bin" ]; then
  exit 0
fi

rm -rf "$dest/node_modules" "$dest/.stamp"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && "$npm" install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error) || die "npm install failed in $dest"
# Qwen Code ships its ripgrep without the execute bit; without it the CLI falls back to a
# slower grep of its own and says so on every run.
find "$dest/node_modules/@qwen-code/qwen-code/vendor/ripgrep" -type f -name rg -exec chmod +x {} + 2>/dev/null || true
cp "$src/package-lock.json" "$dest/.stamp"
for b in "$dest"/node_modules/.bin/{qwen,codex}; do
  echo "clis.sh: $(basename "$b") $("$b" --version 2>/dev/null | head -1)"
done
