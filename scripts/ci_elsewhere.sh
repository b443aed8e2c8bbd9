#!/usr/bin/env bash
# CI: theorembench where users install it. A clone under /tmp, set up with the oldest Python this
# machine has (Debian 12's python3 is 3.11.2; constraints.txt must install there), must give full
# sandbox isolation and pass the tests that depend on where the interpreter lives: as root and,
# where a normal user can be made, as that user too (the sandbox's path without stage0).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
shared="$(cd .. && pwd)/shared"
oldest="$(for p in /usr/bin/python3 python3.11 python3; do command -v "$p" >/dev/null 2>&1 && echo "$p" && break; done)"
base="$(mktemp -d /tmp/theorembench-ci.XXXXXX)"
chmod 755 "$base"
trap 'rm -rf "$base"' EXIT
git clone -q "$repo" "$base/main"
ln -s "$shared" "$base/shared"
cd "$base/main"
echo "ci_elsewhere: clone in $base/main, set up with $oldest ($("$oldest" --version 2>&1))"
PYTHON="$oldest" make setup
.venv/bin/theorembench sandbox check --json --no-tools > "$base/check.json"
.venv/bin/python - "$base/check.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
if not report["full"]:
    sys.exit(f"ci_elsewhere: a clone under /tmp gets {report['mode']} isolation, missing {report['missing']}: {report['problems']}")
print("ci_elsewhere: full isolation from", sys.executable)
PY
tests=(tests/sandbox/test_sandbox.py tests/sandbox/test_sandbox_escapes.py tests/sandbox/test_sandbox_inspect.py tests/methods/eternal/test_eternal_instantiate.py
       tests/methods/improof/test_improof_harness.py tests/project/test_setup_python.py)
.venv/bin/python -m pytest -q -p no:cacheprovider "${tests[@]}"
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null 2>&1 && command -v useradd >/dev/null 2>&1; then
    id tbci >/dev/null 2>&1 || useradd --create-home --shell /bin/bash tbci
    chmod -R a+rX "$base"
    echo "ci_elsewhere: the same tests as the normal user tbci"
    runuser -u tbci -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/tbci CI="${CI:-true}" \
        bash -c "cd '$base/main' && .venv/bin/python -m pytest -q -p no:cacheprovider ${tests[*]}"
fi
