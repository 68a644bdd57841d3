#!/usr/bin/env bash
# make local-model: one step from `make demo-real` to a real model on your own repository.
#
# Finds or builds the Ollama server (scripts/ollama.sh), installs a Qwen2.5-Coder model
# (scripts/models.sh: qwen15 by default), starts the server on 127.0.0.1:11434 unless one
# answers there already, creates the model on it (scripts/ollama-create.sh), and writes what
# `lemmings run` needs into your lemmings user file, so that in any repository
#
#   lemmings run --offline "what you want done"
#
# uses that model, with no other setting. Run it again after a reboot: it starts the server again
# (seconds once everything is built). `scripts/local-model.sh --stop` stops the server it started.
#
# The server: an `ollama` answering at the address is used as it is (the model is created on it);
# else LOCAL_OLLAMA names the binary to start, else the one scripts/ollama.sh builds for this CPU
# (or finds built) in .tools/ollama/. A server this script starts keeps its models in
# .tools/ollama/models, its log in .tools/ollama/serve.log and its pid in .tools/ollama/serve.pid.
#
# The user file ($XDG_CONFIG_HOME/lemmings/config.yaml, else ~/.config/lemmings/config.yaml) gets
# a block between "# BEGIN make local-model" and "# END make local-model" lines, replaced on the
# next run: ollama.host, roles.primary.model and roles.summarizer.model (the model), and
# rag.embedder: offline (retrieval without an embedding model). A file whose own lines already set
# ollama:, roles: or rag: is not edited: the script prints the keys to add there instead.
#
# Environment: MODEL (qwen15 or qwen05), LOCAL_HOST (host:port; default OLLAMA_HOST, else
# 127.0.0.1:11434), LOCAL_THREADS (the model's num_thread; default the server's choice),
# LOCAL_OLLAMA (a server binary to use), LOCAL_CONFIG (the user file), GO, PYTHON.
# --configure-only writes the user file and nothing else (the tests use it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model=${MODEL:-qwen15}
tools="${OLLAMA_TOOLS_DIR:-$root/.tools/ollama}"
host=${LOCAL_HOST:-${OLLAMA_HOST:-127.0.0.1:11434}}
host=${host#http://}
host=${host%/}
case "$host" in *:*) ;; *) host=$host:11434 ;; esac
config=${LOCAL_CONFIG:-${XDG_CONFIG_HOME:-$HOME/.config}/lemmings/config.yaml}
[[ "$config" == /* ]] || config=$HOME/.config/lemmings/config.yaml # the spec ignores a relative XDG_CONFIG_HOME
pidfile=$tools/serve.pid

die() { echo "local-model: $*" >&2; exit 1; }
say() { printf 'local-model: %s\n' "$*"; }

case "$model" in
  qwen05 | qwen15) ;;
  *) echo "local-model: MODEL=$model: qwen15 (Qwen2.5-Coder-1.5B, the default) or qwen05 (0.5B: faster, weaker)" >&2; exit 2 ;;
esac

answers() { curl -sf --max-time 2 "http://$host/api/version" >/dev/null 2>&1; }

# configure writes the block into the user file, or says what to add.
configure() {
  local block
  block="# BEGIN make local-model: $model on $host (scripts/local-model.sh rewrites this block)
ollama:
  host: http://$host
roles:
  primary:
    model: $model
  summarizer:
    model: $model
rag:
  embedder: offline
# END make local-model"
  mkdir -p "$(dirname "$config")"
  local rest=""
  if [ -f "$config" ]; then
    rest="$(awk '/^# BEGIN make local-model/{skip=1} !skip{print} /^# END make local-model/{skip=0}' "$config")"
    if grep -qE '^(ollama|roles|rag):' <<<"$rest"; then
      say "$config sets ollama:, roles: or rag: itself, so it is not edited; add these keys there:"
      sed -n '2,11p' <<<"$block" | sed 's/^/    /'
      say "(or, for this shell: export OLLAMA_HOST=http://$host LEMMINGS_PRIMARY_MODEL=$model LEMMINGS_SUMMARIZER_MODEL=$model LEMMINGS_RAG__EMBEDDER=offline)"
      return 1
    fi
  fi
  local tmp
  tmp="$(mktemp "$config.XXXXXX")"
  { [ -z "$rest" ] || printf '%s\n\n' "$rest"; printf '%s\n' "$block"; } >"$tmp"
  mv -f "$tmp" "$config"
  say "wrote $config: ollama.host http://$host, roles.primary.model and roles.summarizer.model $model, rag.embedder offline"
}

if [ "${1:-}" = --configure-only ]; then
  configure
  exit $?
fi
if [ "${1:-}" = --stop ]; then
  [ -f "$pidfile" ] || die "no server started by this script ($pidfile is missing)"
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null && say "stopped the server (pid $pid)" || say "the server (pid $pid) was not running"
  rm -f "$pidfile"
  exit 0
fi

command -v curl >/dev/null 2>&1 || die "curl is needed (it asks the server whether it answers)"
started=""
if answers; then
  say "an Ollama server answers at $host: the model goes on it"
  bin=${LOCAL_OLLAMA:-}
  [ -n "$bin" ] || { [ -x "$tools/ollama" ] && bin=$tools/ollama; } || bin=$(command -v ollama || true)
  if [ -z "$bin" ]; then
    GO="${GO:-go}" "$root/scripts/ollama.sh" || die "building the server failed (above: each step and the fix)"
    bin=$tools/ollama
  fi
  models_dir=""
  [ -f "$pidfile" ] && [ "$bin" = "$tools/ollama" ] && models_dir=$tools/models # ours: link, do not copy
else
  if [ -n "${LOCAL_OLLAMA:-}" ]; then
    bin=$LOCAL_OLLAMA
  else
    GO="${GO:-go}" "$root/scripts/ollama.sh" ||
      die "building the server failed (above: each step and the fix); with Ollama installed (ollama.com), LOCAL_OLLAMA=\$(command -v ollama) make local-model uses it instead"
    bin=$tools/ollama
  fi
  models_dir=$tools/models
  mkdir -p "$models_dir"
  say "starting $bin serve on $host (models in $models_dir, log $tools/serve.log)"
  # Detached from this shell (setsid where there is one), so it outlives `make`.
  launcher=()
  command -v setsid >/dev/null 2>&1 && launcher=(setsid)
  OLLAMA_HOST=$host OLLAMA_MODELS=$models_dir nohup "${launcher[@]}" "$bin" serve >"$tools/serve.log" 2>&1 </dev/null &
  started=$!
  echo "$started" >"$pidfile"
  for _ in $(seq 150); do
    answers && break
    kill -0 "$started" 2>/dev/null || { tail -n 20 "$tools/serve.log" >&2; rm -f "$pidfile"; die "the server exited at once (its log above: $tools/serve.log)"; }
    sleep 0.2
  done
  answers || die "the server did not answer at $host within 30 s (its log: $tools/serve.log)"
fi

"$root/scripts/models.sh" "$model"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
say "creating $model on $host"
OLLAMA_BIN=$bin "$root/scripts/ollama-create.sh" "$model" "$host" "${models_dir:-$scratch}" "${LOCAL_THREADS:-}"

configured=1
configure || configured=0
echo
if [ -n "$started" ]; then
  say "the server runs in the background (pid $started); scripts/local-model.sh --stop stops it, make local-model starts it again"
fi
say "next, in any repository:"
echo "    lemmings doctor --offline                  # the model, the server and how it was built, its speed"
echo "    lemmings run --offline \"what you want done\""
[ "$configured" = 1 ] || say "(after adding the keys above to $config)"
