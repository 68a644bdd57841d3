#!/usr/bin/env bash
# Measures what issue 35 set out to change, so a redesign's "before" and
# "after" are the same commands:
#   - methods on the widest dependency struct (nodes.Deps; scripts/nodegroups)
#   - hand decoders of event payloads: places outside the events and graph
#     packages that unmarshal an event's Data themselves
#   - packages that link the sandbox helper's init (the package whose init
#     turns a binary into the helper), of all the module's packages
#   - non-test Go files over 500 lines
#   - packages outside the workflow that import nodes, and of those the ones
#     that use only the run's state and words (scripts/runstate-reads.sh
#     counts the state's fields read outside nodes)
#   - with TIME=1, the wall time of `go test -count=1 ./nodes/...` after a
#     build of its test binaries, under nice -n 19 (the machine is shared)
# Usage: scripts/measure.sh            (TIME=1 scripts/measure.sh to time the tests)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
GO=${GO:-go}
mod=$($GO list -m)

echo "== widest dependency struct"
nice -n 19 $GO run ./scripts/nodegroups | grep 'methods on'

echo "== hand decoders of event payloads (json.Unmarshal of an event's Data outside events/ and graph/)"
decoders=$(git grep -nE 'Unmarshal\((ev|e|event)\.Data' -- '*.go' ':!*_test.go' ':!graph/' ':!events/' || true)
printf '%s\n' "$decoders" | { grep . || true; } | sed 's/^/  /'
inside=$(git grep -nE 'Unmarshal\((ev|e|event)\.Data' -- 'events/*.go' ':!*_test.go' 2>/dev/null | grep -c . || true)
echo "decoders: $(printf '%s' "$decoders" | grep -c . || true) outside the events package (${inside:-0} in it)"

echo "== packages linking the sandbox helper's init"
helper_dir=$(git grep -lE 'os\.Args\[0\] != (helperArg0|helperplan\.Arg0)' -- '*.go' ':!*_test.go' | head -1 | xargs dirname)
helper_pkg="$mod/$helper_dir"
all=$($GO list ./...)
total=$(printf '%s\n' "$all" | grep -c .)
linking=$(for p in $all; do
  if [ "$p" != "$helper_pkg" ] && $GO list -deps "$p" | grep -x "$helper_pkg" >/dev/null; then echo "$p"; fi
done)
n=$(printf '%s' "$linking" | grep -c . || true)
echo "helper package: $helper_pkg"
echo "linking: $n of $total packages: $(printf '%s\n' "$linking" | sed "s|^$mod/\?||; s|^$|.|" | tr '\n' ' ')"

echo "== non-test Go files over 500 lines"
big=$(git ls-files '*.go' ':!*_test.go' | xargs wc -l | awk '$2 != "total" && $1 > 500 {print "  " $1, $2}' | sort -rn)
printf '%s\n' "$big" | { grep . || true; }
echo "files over 500: $(printf '%s' "$big" | grep -c . || true)"

echo "== packages outside the workflow importing nodes (non-test files)"
# Run words: the state, how a run stands, and the vocabulary the views read.
words='^(WorkflowState|Plan|PlanMilestone|Milestone|PlannedTask|Task|ImplResult|QAResult|GateOutcome|CriterionResult|Escalation|DoneEntry|Failure|Assessment|Directive|DirectiveFate|SupervisorTrack|SupervisorRun|SupervisorJob|Approval|UsageTotals|RunStatus|Standing|Stored|StandingOf|MilestoneShown|StopReason|Outcome|(Run|Outcome|Phase|Milestone|Node|Impl|Fate|Esc|Prio|Dir|Sup|Trigger|QA|Trailer)[A-Z][A-Za-z]*)$'
readers=0
importers=0
for d in $(git grep -lE "^(import )?[[:space:]]*([a-z_]+ )?\"$mod/nodes\"\$" -- '*.go' ':!*_test.go' ':!nodes/' | xargs -r -n1 dirname | sort -u); do
  importers=$((importers + 1))
  used=$(git grep -hoE '\bnodes\.[A-Z][A-Za-z0-9_]*' -- "$d/*.go" ':!*_test.go' | sed 's/^nodes\.//' | sort -u || true)
  other=$(printf '%s\n' "$used" | grep -vE "$words" || true)
  if [ -z "$other" ]; then
    readers=$((readers + 1))
    echo "  $d: reads a run only: $(echo $used)"
  else
    echo "  $d: also $(echo $other)"
  fi
done
echo "importers of nodes: $importers; only to read a run: $readers"

if [ "${TIME:-0}" = 1 ]; then
  echo "== go test ./nodes/... wall time (nice -n 19; test binaries built first)"
  nice -n 19 $GO test -count=1 -run '^$' ./nodes/... >/dev/null
  start=$(date +%s.%N)
  LEMMINGS_REAL_OLLAMA=${LEMMINGS_REAL_OLLAMA:-0} nice -n 19 $GO test -count=1 ./nodes/...
  end=$(date +%s.%N)
  echo "wall: $(echo "$end - $start" | bc) s (LEMMINGS_REAL_OLLAMA=${LEMMINGS_REAL_OLLAMA:-0})"
fi
