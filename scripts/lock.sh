#!/usr/bin/env bash
# Rewrite constraints.txt with the exact versions installed in .venv (after `make setup`
# with changed ranges in pyproject.toml, or after `pip install -U` of a dependency).
set -euo pipefail
cd "$(dirname "$0")/.."
{
    echo "# Exact versions of every package \`make setup\` installs (pip install -c constraints.txt)."
    echo "# pyproject.toml declares compatible ranges; regenerate this file with scripts/lock.sh after changing them."
    .venv/bin/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^theorembench'
} > constraints.txt
echo "constraints.txt: $(grep -vc '^#' constraints.txt) packages"
