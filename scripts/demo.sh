#!/usr/bin/env bash
# Installs chop, ingests the sample corpus on the embedded defaults, and asks a model-specific question.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 LANGSMITH_TRACING=false
.venv/bin/chop demo "${1:-How often should I clean the air filter on the Coolwave 330C?}"
