#!/usr/bin/env bash
# Installs everything, then runs lint, types and the whole test suite (real PostgreSQL, real models).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 LANGSMITH_TRACING=false
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy chop_rag graphs nodes prompts bench deploy examples
.venv/bin/python -m pytest -q "$@"
