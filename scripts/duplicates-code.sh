#!/usr/bin/env bash
# Lists identical copies between non-test Go files (the `duplicates` tool,
# issue 27's measure): a copy of the tracked non-test .go files with their
# import blocks blanked (same line numbers; a shared import list is not a
# copy of code), read by `duplicates`, rows alike only by shape left out.
# Usage: scripts/duplicates-code.sh [--all]   (--all keeps the shape rows)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files '*.go' | grep -v '_test\.go$' | while IFS= read -r f; do
  mkdir -p "$tmp/$(dirname "$f")"
  awk '/^import \($/ {inside=1; print ""; next}
       inside && /^\)$/ {inside=0; print ""; next}
       inside || /^import "/ {print ""; next}
       {print}' "$f" >"$tmp/$f"
done
out=$(duplicates --repo "$tmp" --most 200 --seconds 120)
if [ "${1:-}" = --all ]; then
  echo "$out"
  exit 0
fi
rows=$(echo "$out" | grep -E '^D[0-9]+ ' | grep -v ' shape' || true)
echo "identical copies between non-test Go files: $(echo -n "$rows" | grep -c . || true)"
[ -z "$rows" ] || echo "$rows"
echo "$out" | grep -E '^(left out|incomplete|\(\+)' || true
