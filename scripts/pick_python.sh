#!/usr/bin/env bash
# Print the first interpreter that theorembench can use: Python >= 3.11 (pyproject.toml's
# requires-python) that can create a venv (Debian ships venv's ensurepip in python3-venv).
# Tries $1 (the PYTHON the user gave, default python3), then python3.13, python3.12, python3.11.
# None: one line on stderr naming what to install, exit 1.
set -uo pipefail
first="${1:-python3}"
for candidate in "$first" python3 python3.13 python3.12 python3.11; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
        echo "$candidate"
        exit 0
    fi
done
found="none"
if command -v "$first" >/dev/null 2>&1; then
    found="$("$first" -c 'import sys; v = sys.version_info; print("%d.%d.%d" % v[:3] + ("" if v >= (3, 11) else " (too old)"))' 2>/dev/null || echo "unusable")"
fi
echo "setup: theorembench needs Python 3.11 or newer with its venv module ($first: $found); install python3 and python3-venv (Debian 12: apt install python3-venv), or run make PYTHON=/path/to/python3.11" >&2
exit 1
