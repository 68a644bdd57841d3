#!/usr/bin/env bash
# Counts the non-test Go files (and their packages) outside nodes that read
# the run state's raw fields the views show (issue 27): after the run view,
# only the view itself should read them.
# Usage: scripts/runstate-reads.sh [field…]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
fields=("$@")
[ ${#fields[@]} -gt 0 ] || fields=(TasksCompleted TasksFailed Usage DoneList Failures CurrentTask CarryForward Milestones DirectiveLog PendingDirectives SupervisorRunLog Escalations Outcome StopReason)
for f in "${fields[@]}"; do
  files=$(git grep -lE "\.${f}\b" -- '*.go' ':!*_test.go' ':!nodes/' || true)
  n=$(printf '%s' "$files" | grep -c . || true)
  pkgs=$(printf "%s\n" "$files" | { grep . || true; } | xargs -r -n1 dirname | sort -u)
  echo "$f: $n files, $(printf '%s' "$pkgs" | grep -c . || true) packages: $(echo $pkgs)"
done
