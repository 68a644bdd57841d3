#!/usr/bin/env bash
# Installs Arize Phoenix, an OpenTelemetry trace receiver with a web UI, into .tools/phoenix/ (a
# Python virtual environment) for the trace tests (make test-traces, docs/observability.md).
# Every package comes from the Python package registry through pip, pinned by version in
# scripts/phoenix/requirements.txt (a pip freeze of a working install) and installed with
# --no-deps, so the set is exactly that list. Cold: about a minute and 850 MB; a second run finds
# the installed list equal to the committed one and takes well under a second.
#
# Environment: PHOENIX_DIR (default <repo>/.tools/phoenix), PYTHON (default python3).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
req="$root/scripts/phoenix/requirements.txt"
dest="${PHOENIX_DIR:-$root/.tools/phoenix}"
python="${PYTHON:-python3}"

die() { echo "phoenix.sh: $*" >&2; exit 1; }
current() { [ -f "$dest/.stamp" ] && cmp -s "$dest/.stamp" "$req" && [ -x "$dest/bin/phoenix" ]; }

current && exit 0
command -v "$python" >/dev/null 2>&1 || die "$python is needed"
mkdir -p "$(dirname "$dest")"
# Helpers sharing one .tools folder may run this at once: one installs, the others wait.
exec 9>"$dest.lock"
flock 9
current && exit 0

start=$(date +%s)
rm -rf "$dest"
"$python" -m venv "$dest" || die "$python -m venv failed: install the venv module (Debian: apt-get install python3-venv)"
if ! "$dest/bin/python" -m pip install --disable-pip-version-check --no-input --quiet --no-deps -r "$req"; then
  rm -rf "$dest"
  die "pip install of the pinned packages failed (see above)"
fi
cp "$req" "$dest/.stamp"
echo "phoenix $(grep '^arize-phoenix==' "$req" | cut -d= -f3) installed in $dest in $(( $(date +%s) - start ))s"
