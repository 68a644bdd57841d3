#!/usr/bin/env bash
# make bench-aider MODEL=qwen05|qwen15: Aider's own benchmark loop (bench/aider_bench.py)
# against `lemmings eval` on the same exercises, the same real Ollama server (.tools/ollama)
# and the same model (.tools/models, created as the test harness creates it), one harness at
# a time under the machine's model lock. Each attempt of an exercise (two: pass@1, pass@2) is
# capped at BENCH_WALL in both harnesses: lemmings' limits.max_wall_time, a timer around
# Aider's attempt. Prints pass@1, pass@2, calls, prompt and completion tokens and model
# seconds per exercise, and the share of prompt tokens the server's cache served (its
# OLLAMA_DEBUG log). docs/eval.md says how to read it.
#
# Environment: BENCH_MODEL (qwen05, qwen15 or smollm2; make's MODEL sets it; default qwen05),
# BENCH_EXERCISES ("go/darts python/grains …", from eval/_suite; default all of it),
# BENCH_OUT (default bench/out/<model>, git-ignored), BENCH_WALL (per attempt, default 5m),
# BENCH_CTX (Aider's context window, fixed so the server never reloads the model; default
# 8192), BENCH_THREADS (the model's num_thread, default 1: see docs/testing-real-models.md),
# BENCH_TEST_TIMEOUT (one run of an exercise's tests, both harnesses; default 60s: they take
# a second, and a candidate that never ends should cost a minute, not three), BENCH_HARNESS
# ("aider lemmings" by default; one of them runs only that half again and keeps
# the other's results in BENCH_OUT), MODEL_LOCK (default /tmp/lemmings-model.lock), PYTHON, GO.
#
# BENCH_SET=realtasks runs the tasks from real history instead (bench/realtasks/tasks.json,
# built into .tools/realtasks by scripts/realtasks; docs/eval.md): three harnesses, "aider-files"
# (Aider given the remit and the files the real change touched), "aider-map" (Aider given the
# remit and its repository map alone) and "lemmings" (the remit alone), judged alike (the
# held-back tests and the base's own tests). BENCH_EXERCISES then names tasks
# ("go/xstrings-translate-invalid-rune python/parse-parser-format …"; default all), BENCH_OUT
# defaults to bench/out/realtasks-<model>, BENCH_HARNESS to "aider-files aider-map lemmings".
#
# BENCH_SET=python133 runs Exercism's 133 Python practice exercises as Aider's code-editing
# benchmark used them (exercism/python at cb75dfa7d), from the archive BENCH_ARCHIVE (default
# ../shared/benchmarks/exercism-python-133.tar.gz); BENCH_EXERCISES then names them
# ("python/two-fer python/leap …"; default all 133), BENCH_OUT defaults to
# bench/out/python133-<model>.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=${TOOLS_DIR:-$ROOT/.tools}
AIDER_VERSION=0.86.2
VENV=$TOOLS/aider-venv
MODEL=${BENCH_MODEL:-qwen05}
SET=${BENCH_SET:-builtin}
case "$SET" in
builtin)
	OUT=${BENCH_OUT:-$ROOT/bench/out/$MODEL}
	EXERCISES=${BENCH_EXERCISES:-$(cd eval/_suite && ls -d */* | tr '\n' ' ')}
	HARNESS=${BENCH_HARNESS:-"aider lemmings"}
	;;
realtasks)
	OUT=${BENCH_OUT:-$ROOT/bench/out/realtasks-$MODEL}
	TASKS=$TOOLS/realtasks
	"${GO:-go}" run ./scripts/realtasks -out "$TASKS" >&2
	EXERCISES=${BENCH_EXERCISES:-$(cd "$TASKS" && ls -d */* | tr '\n' ' ')}
	HARNESS=${BENCH_HARNESS:-"aider-files aider-map lemmings"}
	;;
python133)
	OUT=${BENCH_OUT:-$ROOT/bench/out/python133-$MODEL}
	ARCHIVE=${BENCH_ARCHIVE:-$ROOT/../shared/benchmarks/exercism-python-133.tar.gz}
	[ -f "$ARCHIVE" ] || { echo "bench-aider: BENCH_ARCHIVE=$ARCHIVE: no such archive" >&2; exit 2; }
	TASKS=$TOOLS/python133
	if [ ! -d "$TASKS/python" ]; then
		rm -rf "$TASKS.tmp" && mkdir -p "$TASKS.tmp"
		tar -xzf "$ARCHIVE" -C "$TASKS.tmp"
		practice=$(find "$TASKS.tmp" -type d -path '*/exercises/practice' -print -quit)
		mkdir -p "$TASKS.tmp/set" && mv "$practice" "$TASKS.tmp/set/python"
		rm -rf "$TASKS" && mv "$TASKS.tmp/set" "$TASKS" && rm -rf "$TASKS.tmp"
	fi
	EXERCISES=${BENCH_EXERCISES:-$(cd "$TASKS" && ls -d */* | tr '\n' ' ')}
	HARNESS=${BENCH_HARNESS:-"aider lemmings"}
	;;
*) echo "bench-aider: BENCH_SET=$SET: builtin, realtasks or python133" >&2; exit 2 ;;
esac
WALL=${BENCH_WALL:-5m}
CTX=${BENCH_CTX:-8192}
THREADS=${BENCH_THREADS:-1}
TEST_TIMEOUT_S=${BENCH_TEST_TIMEOUT:-60}
TEST_TIMEOUT_S=${TEST_TIMEOUT_S%s}
runs() { [[ " $HARNESS " == *" $1 "* ]]; }
LOCK=${MODEL_LOCK:-/tmp/lemmings-model.lock}
PY=${PYTHON:-python3}
GO=${GO:-go}
OLLAMA=$TOOLS/ollama/ollama
case "$WALL" in
  *m) WALL_S=$(( ${WALL%m} * 60 )) ;;
  *s) WALL_S=${WALL%s} ;;
  *) echo "bench-aider: BENCH_WALL=$WALL: give minutes (5m) or seconds (300s)" >&2; exit 2 ;;
esac

say() { printf 'bench-aider: %s\n' "$*" >&2; }

# aider-chat, pinned, in its own virtual environment (from the Python package registry).
if ! "$VENV/bin/python" -c "import aider, sys; sys.exit(aider.__version__ != '$AIDER_VERSION')" 2>/dev/null; then
	say "installing aider-chat $AIDER_VERSION into $VENV"
	rm -rf "$VENV"
	"$PY" -m venv "$VENV"
	"$VENV/bin/pip" install -q "aider-chat==$AIDER_VERSION"
fi
GO="$GO" ./scripts/ollama.sh
./scripts/models.sh "$MODEL"

# Only the named harnesses' results are started over; the others' stay.
for h in $HARNESS; do
	case "$h" in
	aider | aider-files | aider-map) rm -rf "${OUT:?}/$h" "$OUT/server-$h.log" "$OUT/models-$h" ;;
	lemmings) rm -rf "${OUT:?}/lemmings" "$OUT/lemmings-eval.jsonl" "$OUT/server-lemmings.log" "$OUT/models-lemmings" "$OUT/lemmings-cwd" ;;
	*) say "BENCH_HARNESS: unknown harness $h"; exit 2 ;;
	esac
done
rm -rf "$OUT/exercises"
mkdir -p "$OUT/exercises" "$OUT/home" "$OUT/bin"
for e in $EXERCISES; do
	src=eval/_suite/$e
	[ "$SET" != builtin ] && src=$TASKS/$e
	[ -d "$src" ] || { say "no exercise or task $src"; exit 2; }
	mkdir -p "$OUT/exercises/$(dirname "$e")"
	cp -r "$src" "$OUT/exercises/$e"
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
	./scripts/ollama-create.sh "$MODEL" "127.0.0.1:$PORT" "$OUT/models-$1" "$THREADS"
}
stop_server() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
	SERVER=""
}
trap stop_server EXIT

dirs=()
for e in $EXERCISES; do dirs+=("$OUT/exercises/$e"); done

exec 9>"$LOCK"
for h in aider aider-files aider-map; do
	runs "$h" || continue
	files=()
	case "$h" in
	aider-files) files=(--files real) ;;
	aider-map) files=(--files none) ;;
	esac
	say "$h: waiting for the model lock"
	flock 9
	start_server "$h"
	say "$h on 127.0.0.1:$PORT: ${#dirs[@]} exercises or tasks"
	OLLAMA_API_BASE=http://127.0.0.1:$PORT HOME="$OUT/home" \
		"$VENV/bin/python" bench/aider_bench.py --model "ollama_chat/$MODEL" --context "$CTX" --wall "$WALL_S" --test-timeout "$TEST_TIMEOUT_S" \
		"${files[@]}" --out "$OUT/$h" "${dirs[@]}"
	stop_server
	flock -u 9
done

if runs lemmings; then
	# Its own repository: inside this one, lemmings would read this one's configuration.
	mkdir -p "$OUT/lemmings-cwd"
	git init -q "$OUT/lemmings-cwd"
	# Temperature 0, as Aider's side runs. The server's address comes from the environment
	# (a project file may not choose an endpoint, docs/security.md).
	cat >"$OUT/lemmings-cwd/lemmings.yaml" <<EOF
roles:
  primary: {model: $MODEL, temperature: 0}
  summarizer: {model: $MODEL, temperature: 0}
rag: {enabled: false}
supervisors: {enabled: false}
limits: {max_wall_time: ${WALL_S}s}
EOF
	say "lemmings: waiting for the model lock"
	flock 9
	start_server lemmings
	say "lemmings on 127.0.0.1:$PORT: ${#dirs[@]} exercises"
	langs=()
	for l in $(for e in $EXERCISES; do dirname "$e"; done | sort -u); do langs+=("$OUT/exercises/$l"); done
	(cd "$OUT/lemmings-cwd" && OLLAMA_HOST=127.0.0.1:$PORT HOME="$OUT/home" XDG_CONFIG_HOME="$OUT/home/.config" \
		"$OUT/bin/lemmings" eval "${langs[@]}" --offline --parallel 1 --test-timeout "${TEST_TIMEOUT_S}s" --out "$OUT/lemmings" --json) >"$OUT/lemmings-eval.jsonl" || true
	stop_server
	flock -u 9
fi

"$PY" bench/summary.py "$OUT" "$MODEL"
