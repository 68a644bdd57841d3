#!/usr/bin/env bash
# make demo-real: a real model at work on the CPU, no GPU, no cloud key.
#
# Builds the Ollama server (scripts/ollama.sh, for this CPU's vector instructions), installs
# Qwen2.5-Coder-1.5B-Instruct (scripts/models.sh qwen15), starts a private server on a free
# loopback port with its own models folder, creates the model with its chat template
# (internal/realollama/qwen.gotmpl), and runs a real remit on a copy of the demo repository
# (demo/testdata/repo: MeanWordLength divides integers and its test fails):
#
#   lemmings run --offline --model qwen15 "$DEMO_REMIT"
#
# It prints the run's end and what the model was asked (from .lemmings/runs/<id>/prompts.jsonl),
# then stops the server. On 2 cores: ~1 minute when everything is built, ~4 more the first time
# (the server's build). Only one model server at a time runs on the machine: the script waits
# for $MODEL_LOCK first.
#
# A run that did not end done keeps its folder (the repository with .lemmings/ and the run branch,
# the server's log, the lemmings binary), and the script says where and how to go on; a done run's
# temporary folder is removed. To use the model on your own repository: make local-model.
#
# Environment: DEMO_DIR (keep the repository there; default a temporary folder, removed),
# DEMO_MODEL (qwen15, the default; qwen05 is faster but cannot make this fix, see
# docs/testing-real-models.md), DEMO_REMIT, DEMO_WALL (the
# run's max_wall_time, default 4m), DEMO_FLAGS (more flags for lemmings run, e.g. --full to
# plan the remit in tasks), DEMO_THREADS (the model's num_thread; default every core,
# 1 on a machine busy with other work), MODEL_LOCK (default /tmp/lemmings-model.lock), GO, PYTHON,
# OLLAMA_TOOLS_DIR and MODELS_DIR (as scripts/ollama.sh and scripts/models.sh read them).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
PY=${PYTHON:-python3}
model=${DEMO_MODEL:-qwen15}
wall=${DEMO_WALL:-4m}
lock=${MODEL_LOCK:-/tmp/lemmings-model.lock}
remit=${DEMO_REMIT:-"Fix MeanWordLength in textstats.go: it divides two ints, so the mean word length is truncated. Make go test pass."}
case "$model" in
  qwen05 | qwen15) ;;
  *) echo "demo-real: DEMO_MODEL=$model: qwen05 or qwen15" >&2; exit 2 ;;
esac

say() { printf '\ndemo-real: %s\n' "$*"; }
t0=$(date +%s)
GO="$GO" ./scripts/ollama.sh
./scripts/models.sh "$model"

tools=${OLLAMA_TOOLS_DIR:-.tools/ollama}
work=$(mktemp -d "${TMPDIR:-/tmp}/lemmings-demo-real.XXXXXX")
server=""
keep=0 # 1 once a run that did not end done has left its folder to look at
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  if [ "$keep" = 1 ]; then
    rm -rf "$work/models" "$work/home" # the model's store (a hard link to the GGUF) and the server's home
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

say "building lemmings"
"$GO" build -o "$work/lemmings" ./cmd/lemmings

repo=${DEMO_DIR:-$work/textstats}
if [ -e "$repo" ] && [ -n "$(ls -A "$repo" 2>/dev/null)" ]; then
  echo "demo-real: DEMO_DIR=$repo is not empty: give a new or empty folder" >&2
  exit 2
fi
mkdir -p "$repo"
cp -r demo/testdata/repo/. "$repo/"
mv "$repo/go.mod.txt" "$repo/go.mod"
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name="lemmings demo" -c user.email=demo@lemmings.invalid commit -q --no-verify -m "textstats: initial version"

exec 9>"$lock"
if ! flock -n 9; then
  say "waiting for $lock (another model server is running on this machine)"
  flock 9
fi

port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
host=127.0.0.1:$port
mkdir -p "$work/models" "$work/home"
say "starting ollama on $host (its log: $work/server.log while it runs)"
OLLAMA_HOST=$host OLLAMA_MODELS="$work/models" HOME="$work/home" "$tools/ollama" serve >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 150); do
  curl -sf "http://$host/api/version" >/dev/null && break
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.2
done

# The model as the test harness creates it; its GGUF hard-linked into the blob store, not copied.
OLLAMA_BIN=$tools/ollama ./scripts/ollama-create.sh "$model" "$host" "$work/models" "${DEMO_THREADS:-}"

say "lemmings run --offline --model $model ${DEMO_FLAGS:+$DEMO_FLAGS }\"$remit\"   (in $repo, limits.max_wall_time $wall)"
t1=$(date +%s)
rc=0
(
  cd "$repo"
  OLLAMA_HOST=http://$host LEMMINGS_SUMMARIZER_MODEL=$model LEMMINGS_RAG__EMBEDDER=offline \
    LEMMINGS_LIMITS__MAX_WALL_TIME=$wall "$work/lemmings" run --offline --model "$model" ${DEMO_FLAGS:-} "$remit"
) || rc=$?
t2=$(date +%s)

say "what the model was asked"
"$PY" - "$repo" <<'PY'
import json, pathlib, sys
runs = sorted(pathlib.Path(sys.argv[1], ".lemmings", "runs").glob("*/prompts.jsonl"), key=lambda p: p.stat().st_mtime)
if not runs:
    sys.exit("no prompts.jsonl: the run made no model call")
calls = [json.loads(l) for l in runs[-1].read_text().splitlines() if l.strip()]
tp = tc = ms = 0
for i, c in enumerate(calls, 1):
    u = c.get("usage") or {}
    p, o, t = u.get("prompt_tokens", 0), u.get("completion_tokens", 0), u.get("elapsed_ms", 0)
    tp, tc, ms = tp + p, tc + o, ms + t
    what = c.get("error") or c.get("reply") or ""
    print(f"{i:3} {c.get('label') or c.get('role', '?'):22} {p:6} in {o:5} out {t / 1000:6.1f}s {c.get('done_reason', ''):6}  {' '.join(what.split())[:90]}")
print(f"{len(calls)} model calls, {tp} prompt and {tc} completion tokens, {ms / 1000:.0f} model-seconds ({runs[-1]})")
PY
branch=$(git -C "$repo" for-each-ref --format='%(refname:short)' 'refs/heads/lemmings/**' | tail -1)
if [ -n "$branch" ]; then
  say "the run's branch $branch:"
  git -C "$repo" --no-pager log --oneline "main..$branch"
  git -C "$repo" --no-pager diff "main...$branch" -- '*.go'
fi
say "run: $((t2 - t1))s; whole demo: $(( $(date +%s) - t0 ))s; lemmings exited $rc"
if [ "$rc" != 0 ]; then
  # The run's own last lines name lemmings resume; its server is stopped with this script.
  keep=1
  say "the run did not end done: its folder is kept for you to look at: $work
  the repository:  $repo (.lemmings/runs/ has the run's events, prompts and report; lemmings report in it prints the report)
  the server log:  $work/server.log
  to go on: make local-model (a server with $model that stays up, and lemmings set up for it), then
            (cd $repo && $work/lemmings resume)
  rm -rf $work when done"
elif [ -z "${DEMO_DIR:-}" ]; then
  say "to use $model on your own repository: make local-model, then lemmings run --offline \"…\" in it"
fi
exit "$rc"
