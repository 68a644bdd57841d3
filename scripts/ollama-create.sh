#!/usr/bin/env bash
# Creates one of the models `make models` extracted on a running Ollama server, as the test
# harness (internal/realollama) creates it:
#   qwen05, qwen15   Qwen2.5-Coder-Instruct with internal/realollama/qwen.gotmpl and its stops
#   smollm2          SmolLM2-135M-Instruct with the ChatML template its GGUF names
#
# Usage: scripts/ollama-create.sh MODEL HOST MODELS_DIR [NUM_THREAD]
#   HOST        the server's host:port
#   MODELS_DIR  its OLLAMA_MODELS folder: the GGUF is hard-linked into its blob store under
#               its sha256 (from SHA256SUMS beside it), so `ollama create` finds the blob and
#               copies nothing (0.5-1.1 GB otherwise); on another file system the CLI copies it
#   NUM_THREAD  the model's num_thread (default: the server's choice, every core; 1 on a machine
#               shared with other work, where llama.cpp's spinning threads collapse)
# OLLAMA_BIN is the ollama client to create with (default .tools/ollama/ollama); MODELS_DIR where
# scripts/models.sh extracted the models (default .tools/models).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model=$1 host=$2 models=$3 threads=${4:-}
dir=${MODELS_DIR:-$root/.tools/models} # where scripts/models.sh extracted them
case "$model" in
  qwen05) gguf=$dir/qwen05/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf ;;
  qwen15) gguf=$dir/qwen15/qwen2.5-coder-1.5b-instruct.gguf ;;
  smollm2) gguf=$dir/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf ;;
  *) echo "ollama-create.sh: unknown model $model (qwen05, qwen15, smollm2)" >&2; exit 2 ;;
esac
[ -f "$gguf" ] || { echo "ollama-create.sh: $gguf is missing: run scripts/models.sh $model" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -f "$(dirname "$gguf")/SHA256SUMS" ]; then
  mkdir -p "$models/blobs"
  sum=$(cut -d' ' -f1 "$(dirname "$gguf")/SHA256SUMS")
  ln "$gguf" "$models/blobs/sha256-$sum" 2>/dev/null || true
fi
{
  echo "FROM $gguf"
  case "$model" in
    qwen*)
      printf 'TEMPLATE """%s"""\n' "$(cat "$root/internal/realollama/qwen.gotmpl")"
      echo 'PARAMETER stop "<|im_end|>"'
      echo 'PARAMETER stop "<|endoftext|>"'
      echo 'PARAMETER stop "<|im_start|>"'
      ;;
  esac
  [ -z "$threads" ] || echo "PARAMETER num_thread $threads"
} >"$work/Modelfile"
OLLAMA_HOST=$host HOME="$work" "${OLLAMA_BIN:-$root/.tools/ollama/ollama}" create "$model" -f "$work/Modelfile" >"$work/create.log" 2>&1 ||
  { cat "$work/create.log" >&2; exit 1; }
