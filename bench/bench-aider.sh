#!/usr/bin/env bash
# make bench-aider: Aider's own benchmark loop (bench/aider_bench.py) against
# `lemmings eval` on the same exercises, the same real Ollama server (.tools/ollama)
# and the same model (SmolLM2-135M, .tools/models), one harness at a time under the
# machine's model lock. Prints pass@1, pass@2, calls, prompt and completion tokens,
# model seconds per exercise and the share of prompt tokens the server's cache
# served (its OLLAMA_DEBUG log). docs/costs.md has the numbers and what they mean.
#
# Environment: BENCH_EXERCISES ("go/leap python/leap …", from eval/_suite),
# BENCH_OUT (default bench/out, git-ignored), BENCH_WALL (lemmings' max_wall_time
# per run, default 10m), BENCH_HARNESS ("aider lemmings" by default; one of them runs
# only that half again and keeps the other's results in BENCH_OUT),
# MODEL_LOCK (default /tmp/lemmings-model.lock), PYTHON, GO.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=${TOOLS_DIR:-$ROOT/.tools}
AIDER_VERSION=0.86.2
VENV=$TOOLS/aider-venv
OUT=${BENCH_OUT:-$ROOT/bench/out}
EXERCISES=${BENCH_EXERCISES:-"go/hello-world go/two-fer go/leap go/collatz-conjecture python/hello-world python/leap"}
WALL=${BENCH_WALL:-10m}
HARNESS=${BENCH_HARNESS:-"aider lemmings"}
runs() { [[ " $HARNESS " == *" $1 "* ]]; }
LOCK=${MODEL_LOCK:-/tmp/lemmings-model.lock}
PY=${PYTHON:-python3}
GO=${GO:-go}
OLLAMA=$TOOLS/ollama/ollama
GGUF=$TOOLS/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf

say() { printf 'bench-aider: %s\n' "$*" >&2; }

# aider-chat, pinned, in its own virtual environment (from the Python package registry).
if ! "$VENV/bin/python" -c "import aider, sys; sys.exit(aider.__version__ != '$AIDER_VERSION')" 2>/dev/null; then
	say "installing aider-chat $AIDER_VERSION into $VENV"
	rm -rf "$VENV"
	"$PY" -m venv "$VENV"
	"$VENV/bin/pip" install -q "aider-chat==$AIDER_VERSION"
fi
[ -x "$OLLAMA" ] || GO="$GO" ./scripts/ollama.sh
[ -f "$GGUF" ] || ./scripts/models.sh

if runs aider && runs lemmings; then
	rm -rf "$OUT"
else # one half again: the other's results stay
	runs aider && rm -rf "$OUT/aider" "$OUT/server-aider.log" "$OUT/models-aider"
	runs lemmings && rm -rf "$OUT/lemmings" "$OUT/lemmings-eval.jsonl" "$OUT/server-lemmings.log" "$OUT/models-lemmings" "$OUT/lemmings-cwd"
	rm -rf "$OUT/exercises"
fi
mkdir -p "$OUT/exercises" "$OUT/home" "$OUT/bin"
for e in $EXERCISES; do
	[ -d "eval/_suite/$e" ] || { say "no exercise eval/_suite/$e"; exit 2; }
	mkdir -p "$OUT/exercises/$(dirname "$e")"
	cp -r "eval/_suite/$e" "$OUT/exercises/$e"
	find "$OUT/exercises/$e" -name go.mod.txt -execdir mv go.mod.txt go.mod \;
done
"$GO" build -o "$OUT/bin/lemmings" ./cmd/lemmings

PORT=""
SERVER=""
start_server() { # $1: name of the log
	PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$OUT/models-$1"
	OLLAMA_HOST=127.0.0.1:$PORT OLLAMA_MODELS="$OUT/models-$1" HOME="$OUT/home" OLLAMA_DEBUG=1 \
		"$OLLAMA" serve >"$OUT/server-$1.log" 2>&1 &
	SERVER=$!
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$PORT/api/version" >/dev/null && break
		sleep 0.2
	done
	printf 'FROM %s\nPARAMETER num_thread 1\n' "$GGUF" >"$OUT/Modelfile"
	OLLAMA_HOST=127.0.0.1:$PORT HOME="$OUT/home" "$OLLAMA" create smollm2 -f "$OUT/Modelfile" >/dev/null 2>&1
}
stop_server() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
	SERVER=""
}
trap stop_server EXIT

dirs=()
for e in $EXERCISES; do dirs+=("$OUT/exercises/$e"); done

exec 9>"$LOCK"
if runs aider; then
	say "aider: waiting for the model lock"
	flock 9
	start_server aider
	say "aider on 127.0.0.1:$PORT: ${#dirs[@]} exercises"
	OLLAMA_API_BASE=http://127.0.0.1:$PORT HOME="$OUT/home" \
		"$VENV/bin/python" bench/aider_bench.py --model ollama_chat/smollm2 --out "$OUT/aider" "${dirs[@]}"
	stop_server
	flock -u 9
fi

if runs lemmings; then
	# Its own repository: inside this one, lemmings would read this one's configuration.
	mkdir -p "$OUT/lemmings-cwd"
	git init -q "$OUT/lemmings-cwd"
	cat >"$OUT/lemmings-cwd/lemmings.yaml" <<EOF
ollama: {host: "http://127.0.0.1:PORT"}
roles:
  primary: {model: smollm2}
  summarizer: {model: smollm2}
rag: {enabled: false}
supervisors: {enabled: false}
limits: {max_wall_time: $WALL}
EOF
	say "lemmings: waiting for the model lock"
	flock 9
	start_server lemmings
	sed -i "s/PORT/$PORT/" "$OUT/lemmings-cwd/lemmings.yaml"
	say "lemmings on 127.0.0.1:$PORT: ${#dirs[@]} exercises"
	langs=()
	for l in $(for e in $EXERCISES; do dirname "$e"; done | sort -u); do langs+=("$OUT/exercises/$l"); done
	(cd "$OUT/lemmings-cwd" && HOME="$OUT/home" XDG_CONFIG_HOME="$OUT/home/.config" \
		"$OUT/bin/lemmings" eval "${langs[@]}" --offline --out "$OUT/lemmings" --json) >"$OUT/lemmings-eval.jsonl" || true
	stop_server
	flock -u 9
fi

"$PY" bench/summary.py "$OUT"
