"""Finding and running the engines: node + KaTeX and pdflatex (+ kpsewhich), and when they cannot run.

``THEOREMBENCH_LATEX_PATH`` (:data:`PATH_ENV`) replaces ``PATH`` when looking for
``node``, ``pdflatex`` and ``kpsewhich`` (and is the ``PATH`` they run with);
``THEOREMBENCH_KATEX_DIR`` (:data:`KATEX_DIR_ENV`) names the KaTeX package (the
``katex`` folder, a ``node_modules`` folder holding it, or a prefix with
``node_modules/katex``). By default KaTeX is looked for where ``scripts/setup.sh``
installs it: ``<venv>/node/node_modules/katex``. :data:`KATEX_VERSION` is the version
setup.sh pins (its ``KATEX_VERSION``); keep the two in step.

:func:`~theorembench.latex.check.process.run_process` (re-exported here) runs an
engine under a timeout, an output cap and resource limits; :func:`tex_env` is the
sandboxed environment TeX programs run with.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path

from theorembench.latex.check.process import run_process

__all__ = [
    "KATEX_DIR_ENV",
    "KATEX_VERSION",
    "PATH_ENV",
    "available",
    "katex_candidates",
    "katex_dir",
    "katex_script",
    "katex_unavailable",
    "kpsewhich",
    "pdflatex_unavailable",
    "run_process",
    "search_path",
    "tex_env",
]

KATEX_VERSION = "0.16.47"  # the version scripts/setup.sh installs (its KATEX_VERSION)
PATH_ENV = "THEOREMBENCH_LATEX_PATH"
KATEX_DIR_ENV = "THEOREMBENCH_KATEX_DIR"


def search_path() -> str:
    """Where node, pdflatex and kpsewhich are looked for: ``$THEOREMBENCH_LATEX_PATH``, else ``$PATH``."""
    return os.environ.get(PATH_ENV) or os.environ.get("PATH") or os.defpath


def katex_candidates() -> list[Path]:
    """The folders that may hold the katex npm package, in the order they are tried."""
    env = os.environ.get(KATEX_DIR_ENV)
    if env:
        p = Path(env)
        return [p, p / "katex", p / "node_modules" / "katex"]
    out = [Path(sys.prefix) / "node" / "node_modules" / "katex"]
    for parent in Path(__file__).resolve().parents:
        cand = parent / ".venv" / "node" / "node_modules" / "katex"
        if cand not in out:
            out.append(cand)
    return out


def katex_dir() -> Path | None:
    """The first of :func:`katex_candidates` that holds a usable katex package; None if none does."""
    for cand in katex_candidates():
        if (cand / "package.json").is_file() and (cand / "dist" / "katex.js").is_file():
            return cand
    return None


def katex_script() -> Path | None:
    """``katex_check.js`` (package data next to this module); None if it is missing."""
    try:
        ref = resources.files(__package__ or "theorembench.latex.check").joinpath("katex_check.js")
        path = Path(str(ref))
    except (ModuleNotFoundError, TypeError):
        path = Path(__file__).with_name("katex_check.js")
    return path if path.is_file() else None


def katex_unavailable() -> str | None:
    """Why KaTeX cannot run (node, the script or the katex package missing); None if it can."""
    search = search_path()
    node = shutil.which("node", path=search)
    if node is None:
        return f"node not found on {PATH_ENV if os.environ.get(PATH_ENV) else 'PATH'} (install Node.js)"
    if katex_script() is None:
        return "katex_check.js is missing from the theorembench package (package data not installed)"
    if katex_dir() is None:
        where = ", ".join(str(c) for c in katex_candidates()[:2])
        return f"the katex npm package was not found (looked in {where}; run scripts/setup.sh or set {KATEX_DIR_ENV})"
    return None


_REQUIRED_STY = ("amsmath.sty", "amssymb.sty", "amsthm.sty", "mathtools.sty", "bm.sty")


@lru_cache(maxsize=64)
def kpsewhich(search: str, names: tuple[str, ...]) -> frozenset[str]:
    """Which of the files kpsewhich finds (one call for all)."""
    exe = shutil.which("kpsewhich", path=search)
    if exe is None or not names:
        return frozenset()
    with tempfile.TemporaryDirectory(prefix="tb-kpse-") as tmp:
        try:
            res = subprocess.run([exe, *names], capture_output=True, text=True, timeout=20, env=tex_env(tmp, search),
                                 stdin=subprocess.DEVNULL, cwd=tmp)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return frozenset()
    found = {Path(line.strip()).name for line in res.stdout.splitlines() if line.strip()}
    return frozenset(n for n in names if n in found)


@lru_cache(maxsize=16)
def _pdflatex_unavailable_cached(search: str) -> str | None:
    if shutil.which("pdflatex", path=search) is None:
        return ("pdflatex not found on " + (PATH_ENV if os.environ.get(PATH_ENV) else "PATH")
                + " (install texlive-latex-base and texlive-latex-recommended: scripts/setup.sh)")  # fmt: skip
    if shutil.which("kpsewhich", path=search) is None:
        return None  # cannot tell; the compile will say
    missing = [n for n in _REQUIRED_STY if n not in kpsewhich(search, _REQUIRED_STY)]
    if missing:
        return f"pdflatex is missing LaTeX packages {', '.join(missing)} (install texlive-latex-recommended)"
    return None


def pdflatex_unavailable() -> str | None:
    """Why pdflatex cannot run (not found, or the base LaTeX packages missing); None if it can."""
    return _pdflatex_unavailable_cached(search_path())


def available() -> dict[str, str | None]:
    """``{"katex": why not | None, "pdflatex": why not | None}``: None when the engine can run."""
    return {"katex": katex_unavailable(), "pdflatex": pdflatex_unavailable()}


def tex_env(tmp: str, search: str) -> dict[str, str]:
    """The minimal environment a TeX program runs with: everything inside tmp, no absolute or ``..`` paths."""
    return {
        "PATH": search,
        "HOME": tmp,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TEXMFOUTPUT": tmp,
        "TEXMFVAR": os.path.join(tmp, "texmf-var"),
        "TEXMFCONFIG": os.path.join(tmp, "texmf-config"),
        "TEXMFHOME": os.path.join(tmp, "texmf"),
        "openin_any": "p",
        "openout_any": "p",
        "shell_escape": "f",
        "max_print_line": "100000",
        "error_line": "254",
        "half_error_line": "200",
        "MKTEXPK": "0",
        "MKTEXTFM": "0",
        "MKTEXMF": "0",
        "MKTEXFMT": "0",
        "MKTEXTEX": "0",
    }
