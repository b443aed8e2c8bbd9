"""LaTeX validity checks for generated item strings: KaTeX per math segment, pdflatex per item.

Every string that may reach the benchmark (a stem, an option) is checked twice:

* **KaTeX** (:func:`check_katex`) parses each math segment the way a web viewer
  renders it: ``throwOnError`` semantics, strict mode off (unicode in math is
  accepted), the paper's macros through KaTeX's ``macros`` option. All segments
  of a batch go to one ``node`` process (``katex_check.js``, next to this file).
* **pdflatex** (:func:`check_pdflatex`) compiles one small document holding every
  string, each in its own paragraph between two marker macros, with amsmath,
  amssymb, amsthm, mathtools, bm and the paper's (sanitised) macro definitions.
  This is the authoritative check. The first error of the log (its ``! ...``
  line and ``l.<n>``) is mapped back to the string it came from; the marker
  after each string also catches what TeX would let pass silently (a string
  that ends inside math mode or leaves a brace group or environment open).

:func:`check_item` runs both (concurrently) and merges the reports.

Safety
    pdflatex runs with ``-no-shell-escape -halt-on-error -interaction=nonstopmode
    -draftmode`` in a fresh temporary directory (its working and output
    directory), with a minimal environment: ``openin_any=p`` / ``openout_any=p``
    (no reading or writing absolute paths or ``..``; ``\\input{/etc/passwd}``
    fails), ``HOME``/``TEXMFVAR`` inside the temporary directory, font and
    format generation (``mktex*``) off, stdin closed. The paper preamble is
    sanitised first (:func:`sanitize_preamble`). Both engines run under a
    timeout; a run that does not finish is killed with its process group and
    reported as an issue, never waited on.

Availability
    An engine that cannot run is listed in ``LatexReport.skipped`` with the
    reason; nothing is raised. :func:`available` says which engines can run.
    ``THEOREMBENCH_LATEX_PATH`` replaces ``PATH`` when looking for ``node`` and
    ``pdflatex`` (and is the ``PATH`` pdflatex runs with); ``THEOREMBENCH_KATEX_DIR``
    names the KaTeX package (the ``katex`` folder, a ``node_modules`` folder
    holding it, or a prefix with ``node_modules/katex``). By default KaTeX is
    looked for where ``scripts/setup.sh`` installs it: ``<venv>/node/node_modules/katex``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from theorembench.latex.macros import MacroDef, MacroTable
from theorembench.latex.scan import ScanError, is_escaped, read_argument, read_group, read_optional, skip_space

__all__ = [
    "KATEX_VERSION",
    "LatexIssue",
    "LatexReport",
    "available",
    "check_item",
    "check_katex",
    "check_pdflatex",
    "katex_macros_from_preamble",
    "math_segments",
    "sanitize_preamble",
]

log = logging.getLogger(__name__)

KATEX_VERSION = "0.16.47"  # the version scripts/setup.sh installs
PATH_ENV = "THEOREMBENCH_LATEX_PATH"
KATEX_DIR_ENV = "THEOREMBENCH_KATEX_DIR"

Engine = Literal["katex", "pdflatex"]


# --------------------------------------------------------------------------- reports


@dataclass
class LatexIssue:
    where: str  # the key of the string: "question", "choice B", or "preamble"
    segment: str  # the offending math segment (KaTeX) or source line (pdflatex), shortened
    engine: Engine
    message: str

    def __str__(self) -> str:
        return f"[{self.engine}] {self.where}: {self.message}"


@dataclass
class LatexReport:
    ok: bool = True
    issues: list[LatexIssue] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)  # segments (KaTeX) / strings (pdflatex) checked
    skipped: list[str] = field(default_factory=list)  # "engine: why it did not run (fully)"

    def add(self, issue: LatexIssue) -> None:
        self.issues.append(issue)
        self.ok = False

    def merge(self, other: LatexReport) -> LatexReport:
        self.issues.extend(other.issues)
        for engine, n in other.checked.items():
            self.checked[engine] = self.checked.get(engine, 0) + n
        self.skipped.extend(other.skipped)
        self.ok = not self.issues
        return self

    def wheres(self, engine: str | None = None) -> set[str]:
        """The keys of the strings with an issue (from one engine, or any)."""
        return {i.where for i in self.issues if engine is None or i.engine == engine}

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "issues": [vars(i).copy() for i in self.issues],
            "checked": dict(self.checked),
            "skipped": list(self.skipped),
        }


def _short(text: str, limit: int = 240) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- math segments

# Environments that are math by themselves (outside $...$), checked as one display segment.
MATH_ENVS = {
    "equation", "equation*", "align", "align*", "alignat", "alignat*", "gather", "gather*",
    "multline", "multline*", "flalign", "flalign*", "eqnarray", "eqnarray*", "displaymath", "math",
    "split", "CD",
}  # fmt: skip
_BEGIN_ENV = re.compile(r"\\begin\s*\{([^{}\\]+)\}")
_END_ENV = re.compile(r"\\(begin|end)\s*\{([^{}\\]+)\}")
_LETTER = re.compile(r"[A-Za-z@]+")


@dataclass(frozen=True)
class Segment:
    tex: str  # what KaTeX parses: the inside of $..$, \(..\), \[..\], $$..$$, or a whole environment
    display: bool
    start: int  # offset of the opening delimiter in the string
    end: int  # offset after the closing delimiter (len(text) when unclosed)
    error: str | None = None  # set when the segment is not closed

    def source(self, text: str) -> str:
        return text[self.start : self.end]


def _find_closer(text: str, pos: int, closer: str) -> tuple[int, bool]:
    """Offset of closer at brace depth 0 from pos (as KaTeX's auto-render finds it); -1 if none.

    The flag says whether the offset was found only by ignoring braces (an unbalanced
    brace inside the segment): the segment then ends at the first closer.
    """
    n, depth, i = len(text), 0, pos
    first_any = -1
    while i < n:
        if text.startswith(closer, i):
            if depth <= 0:
                return i, False
            if first_any < 0:
                first_any = i
            i += len(closer)
            continue
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        i += 1
    return first_any, first_any >= 0


def _find_env_end(text: str, pos: int, name: str) -> tuple[int, int]:
    """(start, end) of the \\end{name} closing an environment whose body starts at pos; (-1, -1) if none."""
    depth = 1
    for m in _END_ENV.finditer(text, pos):
        if is_escaped(text, m.start()) or m.group(2).strip() != name:
            continue
        depth += 1 if m.group(1) == "begin" else -1
        if depth == 0:
            return m.start(), m.end()
    return -1, -1


def scan_math(text: str) -> list[Segment]:
    """The math segments of a string, in order, unclosed ones with ``error`` set.

    Recognised: ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]`` and the environments in
    :data:`MATH_ENVS`. ``\\$`` is a dollar sign, ``\\\\`` a line break (so ``\\\\$x$``
    opens math); a closing delimiter counts only at brace depth 0 of its segment, so
    ``$\\text{if $x>0$}$`` is one segment. Text-mode content between segments is not
    looked into further.
    """
    segments: list[Segment] = []
    n, i = len(text), 0
    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 >= n:
                break
            nxt = text[i + 1]
            if nxt in "([":
                closer = "\\)" if nxt == "(" else "\\]"
                j, unbalanced = _find_closer(text, i + 2, closer)
                if j < 0:
                    segments.append(Segment(text[i + 2 :], nxt == "[", i, n, f"\\{nxt} without a matching {closer}"))
                    return segments
                segments.append(Segment(text[i + 2 : j], nxt == "[", i, j + 2))
                i = j + 2
                continue
            m = _BEGIN_ENV.match(text, i)
            if m and m.group(1).strip() in MATH_ENVS:
                name = m.group(1).strip()
                s, e = _find_env_end(text, m.end(), name)
                if s < 0:
                    why = f"\\begin{{{name}}} without a matching \\end{{{name}}}"
                    segments.append(Segment(text[i:], True, i, n, why))
                    return segments
                if name in ("math", "displaymath"):
                    segments.append(Segment(text[m.end() : s], name == "displaymath", i, e))
                else:
                    segments.append(Segment(text[i:e], True, i, e))
                i = e
                continue
            lm = _LETTER.match(text, i + 1)
            i = lm.end() if lm else i + 2  # a control word, or a control symbol such as \$ \\ \{
            continue
        if ch == "$":
            display = text.startswith("$$", i)
            opener = "$$" if display else "$"
            j, _ = _find_closer(text, i + len(opener), opener)
            if j < 0:
                why = f"{opener} opens math that is never closed"
                segments.append(Segment(text[i + len(opener) :], display, i, n, why))
                return segments
            segments.append(Segment(text[i + len(opener) : j], display, i, j + len(opener)))
            i = j + len(opener)
            continue
        i += 1
    return segments


def math_segments(text: str) -> list[str]:
    """The TeX of each closed math segment of text (see :func:`scan_math`).

    Delimiters are stripped (``$x$`` gives ``x``); a math environment such as
    ``align*`` is returned whole (``\\begin{align*}..\\end{align*}``), as KaTeX
    parses it.
    """
    return [s.tex for s in scan_math(text) if s.error is None]


# --------------------------------------------------------------------------- tools


def _search_path() -> str:
    return os.environ.get(PATH_ENV) or os.environ.get("PATH") or os.defpath


def _katex_candidates() -> list[Path]:
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


def _katex_dir() -> Path | None:
    for cand in _katex_candidates():
        if (cand / "package.json").is_file() and (cand / "dist" / "katex.js").is_file():
            return cand
    return None


def _script() -> Path | None:
    try:
        ref = resources.files("theorembench.methods.lmb").joinpath("katex_check.js")
        path = Path(str(ref))
    except (ModuleNotFoundError, TypeError):
        path = Path(__file__).with_name("katex_check.js")
    return path if path.is_file() else None


def _katex_unavailable() -> str | None:
    search = _search_path()
    node = shutil.which("node", path=search)
    if node is None:
        return f"node not found on {PATH_ENV if os.environ.get(PATH_ENV) else 'PATH'} (install Node.js)"
    if _script() is None:
        return "katex_check.js is missing from the theorembench package (package data not installed)"
    if _katex_dir() is None:
        where = ", ".join(str(c) for c in _katex_candidates()[:2])
        return f"the katex npm package was not found (looked in {where}; run scripts/setup.sh or set {KATEX_DIR_ENV})"
    return None


_REQUIRED_STY = ("amsmath.sty", "amssymb.sty", "amsthm.sty", "mathtools.sty", "bm.sty")


@lru_cache(maxsize=64)
def _kpsewhich(search: str, names: tuple[str, ...]) -> frozenset[str]:
    """Which of the files kpsewhich finds (one call for all)."""
    exe = shutil.which("kpsewhich", path=search)
    if exe is None or not names:
        return frozenset()
    with tempfile.TemporaryDirectory(prefix="tb-kpse-") as tmp:
        try:
            res = subprocess.run([exe, *names], capture_output=True, text=True, timeout=20, env=_tex_env(tmp, search),
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
    missing = [n for n in _REQUIRED_STY if n not in _kpsewhich(search, _REQUIRED_STY)]
    if missing:
        return f"pdflatex is missing LaTeX packages {', '.join(missing)} (install texlive-latex-recommended)"
    return None


def _pdflatex_unavailable() -> str | None:
    return _pdflatex_unavailable_cached(_search_path())


def available() -> dict[str, str | None]:
    """``{"katex": why not | None, "pdflatex": why not | None}``: None when the engine can run."""
    return {"katex": _katex_unavailable(), "pdflatex": _pdflatex_unavailable()}


def _run(cmd: list[str], *, input_text: str | None, timeout_s: float, cwd: str | None,
         env: dict[str, str] | None) -> tuple[int | None, str, str]:  # fmt: skip
    """Run cmd in its own process group; (returncode or None on timeout, stdout, stderr)."""
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True, text=True, encoding="utf-8",
        errors="replace",
    )  # fmt: skip
    try:
        out, err = proc.communicate(input_text, timeout=max(0.1, timeout_s))
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        out, err = proc.communicate()
        return None, out or "", err or ""


# --------------------------------------------------------------------------- KaTeX


def check_katex(strings: dict[str, str], *, macros: dict[str, str] | None = None,
                timeout_s: float = 30) -> LatexReport:  # fmt: skip
    """Parse every math segment of every string with KaTeX, in one node process.

    An unclosed ``$``/``\\(``/``\\[``/math environment is an issue of its own; other
    segments are handed to ``katex.renderToString`` with ``throwOnError: true``,
    ``strict: false`` and ``macros``. If node does not finish within ``timeout_s``,
    the segment it was on is an issue and the rest are reported unchecked in ``skipped``.
    """
    report = LatexReport(checked={"katex": 0})
    reason = _katex_unavailable()
    if reason:
        report.skipped.append(f"katex: {reason}")
        return report
    jobs: list[tuple[str, Segment, str]] = []
    found: list[tuple[tuple[int, int], LatexIssue]] = []  # (string order, offset): issues sorted at the end
    order = {where: k for k, where in enumerate(strings)}
    for where, text in strings.items():
        text = text or ""
        for seg in scan_math(text):
            if seg.error:
                issue = LatexIssue(where, _short(seg.source(text)), "katex", seg.error)
                found.append(((order[where], seg.start), issue))
                report.checked["katex"] += 1
            else:
                jobs.append((where, seg, text))
    try:
        if jobs:
            _run_katex(jobs, macros, timeout_s, report, found, order)
    except OSError as exc:  # node could not be started
        report.skipped.append(f"katex: could not run node: {exc}")
    finally:
        for _, issue in sorted(found, key=lambda x: x[0]):
            report.add(issue)
    return report


def _run_katex(jobs: list[tuple[str, Segment, str]], macros: dict[str, str] | None, timeout_s: float,
               report: LatexReport, found: list, order: dict[str, int]) -> None:  # fmt: skip
    node = shutil.which("node", path=_search_path())
    script, katex_dir = _script(), _katex_dir()
    assert node and script and katex_dir
    payload = json.dumps({
        "katex": str(katex_dir),
        "macros": dict(macros or {}),
        "segments": [{"tex": seg.tex, "display": seg.display} for _, seg, _ in jobs],
    })  # fmt: skip
    env = {"PATH": _search_path(), "HOME": tempfile.gettempdir(), "NODE_OPTIONS": "", "LANG": "C.UTF-8"}
    rc, out, err = _run([node, "--max-old-space-size=1024", str(script)], input_text=payload, timeout_s=timeout_s,
                        cwd=None, env=env)  # fmt: skip
    results: dict[int, dict] = {}
    fatal = None
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "fatal" in msg:
            fatal = msg["fatal"]
        elif "i" in msg:
            results[int(msg["i"])] = msg
    if fatal is not None:
        report.skipped.append(f"katex: {fatal}")
        return
    for k, (where, seg, text) in enumerate(jobs):
        res = results.get(k)
        if res is None:
            missing = len(jobs) - k
            if rc is None:
                message = f"KaTeX did not finish this segment within {timeout_s:g} s"
                found.append(((order[where], seg.start), LatexIssue(where, _short(seg.source(text)), "katex", message)))
                report.checked["katex"] += 1
                missing -= 1
                why = f"timed out after {timeout_s:g} s"
            else:
                why = f"node exited with status {rc}: {_short(err, 300) or 'no output'}"
            if missing:
                report.skipped.append(f"katex: {missing} segment(s) not checked ({why})")
            break
        report.checked["katex"] += 1
        if not res.get("ok"):
            issue = LatexIssue(where, _short(seg.source(text)), "katex", _katex_message(res, seg.tex))
            found.append(((order[where], seg.start), issue))


def _katex_message(res: dict, tex: str) -> str:
    message = str(res.get("message") or "KaTeX error").strip()
    pos = res.get("position")
    if isinstance(pos, int) and 0 <= pos <= len(tex):
        before, after = tex[max(0, pos - 30) : pos], tex[pos : pos + 30]
        message += f" (at position {pos}: …{before}⟨here⟩{after}…)".replace("\n", " ")
    return message


# --------------------------------------------------------------------------- preamble


def _strip_comments(text: str) -> str:
    out: list[str] = []
    for line in text.split("\n"):
        i = 0
        while True:
            j = line.find("%", i)
            if j < 0:
                out.append(line)
                break
            if is_escaped(line, j):
                i = j + 1
                continue
            out.append(line[:j])
            break
    return "\n".join(out)


# Packages the check document may load from a paper preamble: notation packages only,
# and only when installed. The base packages are always loaded (a second \usepackage
# with other options would be an option clash), so they are dropped from the paper's list.
BASE_PACKAGES = ("amsmath", "amssymb", "amsthm", "mathtools", "bm")
SAFE_PACKAGES = {
    "amsfonts", "amscd", "latexsym", "mathrsfs", "eucal", "euscript", "upgreek", "stmaryrd", "xcolor", "color",
    "xspace", "ifthen", "calc", "etoolbox", "xparse", "braket", "cancel", "nicefrac", "xfrac", "textcomp",
    "dsfont", "bbm", "bbold", "mathbbol", "esint", "wasysym", "array", "physics", "mathdots", "accents",
    "centernot", "extarrows", "tensor", "slashed", "yhmath", "mleftright", "enumitem", "enumerate", "booktabs",
    "url", "amsbsy", "amstext", "amsopn", "bbding", "pifont", "dutchcal", "mathalpha", "scalerel",
    "stackengine", "relsize", "faktor", "interval", "diffcoeff", "derivative", "units", "siunitx", "gensymb",
}  # fmt: skip

# Commands removed from a preamble with their arguments: (optional args, mandatory args).
_DROP_ARGS: dict[str, tuple[int, int]] = {
    "include": (0, 1), "includeonly": (0, 1), "InputIfFileExists": (0, 3), "IfFileExists": (0, 3),
    "import": (0, 2), "subimport": (0, 2), "inputfrom": (0, 2), "subinputfrom": (0, 2), "includefrom": (0, 2),
    "subincludefrom": (0, 2), "subfile": (0, 1), "includegraphics": (1, 1), "bibliography": (0, 1),
    "bibliographystyle": (0, 1), "addbibresource": (1, 1), "graphicspath": (0, 1), "documentclass": (1, 1),
    "special": (0, 1), "directlua": (0, 1), "luaexec": (0, 1), "latelua": (0, 1), "ShellEscape": (0, 1),
    "hypersetup": (0, 1), "geometry": (0, 1), "usetikzlibrary": (0, 1), "tikzset": (0, 1),
    "pgfplotsset": (0, 1), "externaldocument": (1, 1), "VerbatimInput": (1, 1), "verbatiminput": (0, 1),
    "lstinputlisting": (1, 1), "inputminted": (1, 2), "filecontents": (0, 0), "pdfximage": (0, 1),
    "immediate": (0, 0), "pdfshellescape": (0, 0), "endinput": (0, 0), "dump": (0, 0), "batchmode": (0, 0),
    "nonstopmode": (0, 0), "scrollmode": (0, 0), "errorstopmode": (0, 0), "stop": (0, 0),
    "makeindex": (0, 0), "makeglossaries": (0, 0), "maketitle": (0, 0),
}  # fmt: skip
# TeX primitives with file names or stream numbers: removed up to the end of their argument.
_DROP_PRIMITIVE = {"input", "openin", "openout", "closein", "closeout", "read", "write", "message"}
_CS = re.compile(r"\\([A-Za-z@]+)|\\(.)", re.DOTALL)


def sanitize_preamble(preamble: str) -> str:
    """The paper's macro definitions made safe and self-contained for the check document.

    Comments are removed; ``\\usepackage``/``\\RequirePackage`` keep only installed
    packages of :data:`SAFE_PACKAGES` (the base packages are loaded anyway);
    file, shell, output and interaction commands (``\\input``, ``\\include``,
    ``\\write18`` and any ``\\write``, ``\\openout``, ``\\openin``, ``\\read``,
    ``\\immediate``, ``\\special``, ``\\directlua``, ``\\documentclass``,
    ``\\begin{document}``, ``\\end{document}``, ``\\endinput``, mode changes ...)
    are removed with their arguments, as are layout settings of packages that are
    not loaded (``\\hypersetup``, ``\\geometry`` ...). Definitions are kept as written.
    This is a first line of defence only: the compile itself cannot run shell
    commands or touch files outside its temporary directory.
    """
    text = _strip_comments(preamble or "")
    out: list[str] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _CS.search(text, pos)
        if m is None:
            out.append(text[pos:])
            break
        out.append(text[pos : m.start()])
        name = m.group(1)
        p = m.end()
        if name is None:  # control symbol (\\, \%, \{ ...): keep
            out.append(m.group(0))
            pos = p
            continue
        try:
            if name in ("usepackage", "RequirePackage"):
                opts, p = read_optional(text, p)
                arg, p = read_argument(text, p)
                keep = _keep_packages([x.strip() for x in arg.split(",") if x.strip()])
                if keep:
                    out.append(f"\\usepackage{'[' + opts + ']' if opts else ''}{{{','.join(keep)}}}")
                pos = p
                continue
            if name in ("begin", "end"):
                q = skip_space(text, p)
                if text.startswith("{", q):
                    env, q2 = read_group(text, q)
                    if env.strip() in ("document", "filecontents", "filecontents*"):
                        if env.strip().startswith("filecontents") and name == "begin":
                            _, q3 = _find_env_end(text, q2, env.strip())
                            q2 = n if q3 < 0 else q3
                        pos = q2
                        continue
                elif name == "end":  # the \end primitive: stops TeX
                    pos = p
                    continue
                out.append(m.group(0))
                pos = p
                continue
            if name in _DROP_ARGS:
                n_opt, n_arg = _DROP_ARGS[name]
                if text.startswith("*", p):
                    p += 1
                for _ in range(n_opt):
                    _, p = read_optional(text, p)
                for _ in range(n_arg):
                    _, p = read_argument(text, p)
                pos = p
                continue
            if name in _DROP_PRIMITIVE:
                pos = _skip_primitive(text, p, name)
                continue
        except ScanError:
            pos = n  # an unreadable argument: drop the rest rather than guess
            continue
        out.append(m.group(0))
        pos = p
    result = "".join(out)
    return re.sub(r"\n{3,}", "\n\n", result).strip()


def _skip_primitive(text: str, p: int, name: str) -> int:
    """End of a file/stream primitive's argument: \\input{f} or \\input f, \\write18{..}, \\openin3=f ..."""
    n = len(text)
    q = skip_space(text, p, newlines=False)
    if name == "message":
        return read_argument(text, q)[1] if q < n else q
    if name == "input":
        if text.startswith("{", q):
            return read_group(text, q)[1]
        while q < n and not text[q].isspace():
            q += 1
        return q
    # a stream: a number or a control sequence
    m = re.compile(r"\\[A-Za-z@]+|-?\d+").match(text, q)
    q = m.end() if m else q
    q = skip_space(text, q, newlines=False)
    if name in ("closein", "closeout"):
        return q
    if name == "write":
        return read_group(text, q)[1] if text.startswith("{", q) else q
    if name == "read":
        m2 = re.compile(r"\s*to\s*(\\[A-Za-z@]+)?").match(text, q)
        return m2.end() if m2 else q
    if text.startswith("=", q):  # openin / openout: a file name up to a space
        q = skip_space(text, q + 1, newlines=False)
    if text.startswith("{", q):
        return read_group(text, q)[1]
    while q < n and not text[q].isspace():
        q += 1
    return q


# A font a package needs that TeX distributions ship apart from its .sty: the package is
# loaded only when both are installed (a missing font would fail at the first formula).
_PACKAGE_FONTS = {
    "mathrsfs": "rsfs10.tfm", "dsfont": "dsrom10.tfm", "bbm": "bbm10.tfm", "bbold": "bbold10.tfm",
    "mathbbol": "bbold10.tfm", "stmaryrd": "stmary10.tfm", "wasysym": "wasy10.tfm", "esint": "esint10.tfm",
    "upgreek": "eurm10.tfm", "yhmath": "yhcmex10.tfm", "pifont": "pzdr.tfm", "bbding": "bbding10.tfm",
    "mathabx": "matha10.tfm",
}  # fmt: skip


def _keep_packages(names: list[str]) -> list[str]:
    wanted = [x for x in names if x in SAFE_PACKAGES and x not in BASE_PACKAGES]
    if not wanted:
        return []
    files = {f"{x}.sty" for x in wanted} | {_PACKAGE_FONTS[x] for x in wanted if x in _PACKAGE_FONTS}
    found = _kpsewhich(_search_path(), tuple(sorted(files)))
    return [x for x in wanted if f"{x}.sty" in found and _PACKAGE_FONTS.get(x, f"{x}.sty") in found]


# --------------------------------------------------------------------------- KaTeX macros


def katex_macros_from_preamble(preamble: str) -> dict[str, str]:
    """KaTeX ``macros`` for the simple definitions of a preamble.

    Converted: ``\\newcommand``/``\\renewcommand``/``\\providecommand`` (an optional
    first argument becomes its default, since KaTeX macros take no optional
    arguments), ``\\def`` with undelimited parameters, ``\\DeclareMathOperator``
    (starred too), ``\\let``, xparse commands with ``m``/``o``/``O{}`` arguments and
    mathtools' ``\\DeclarePairedDelimiter`` (as ``\\left..#1\\right..``). Delimited
    ``\\def``s and other unsupported forms are left out. The last definition of a
    name wins, as in TeX. ``\\ensuremath`` and ``\\xspace`` used in bodies are given
    KaTeX meanings.
    """
    text = _strip_comments(preamble or "")
    try:
        table = MacroTable.collect(text)
    except (ScanError, ValueError):
        return {}
    macros: dict[str, str] = {}
    for name in table.names:
        d = table.get(name)
        if d is None:
            continue
        body = _katex_body(d, text)
        if body is not None:
            macros[name] = body
    joined = " ".join(macros.values())
    if "\\ensuremath" in joined and "\\ensuremath" not in macros:
        macros["\\ensuremath"] = "#1"
    if "\\xspace" in joined and "\\xspace" not in macros:
        macros["\\xspace"] = ""
    return macros


def _katex_body(d: MacroDef, text: str) -> str | None:
    if d.kind == "DeclarePairedDelimiter":
        try:
            src = text[d.pos : d.end]
            p = len("\\DeclarePairedDelimiter")
            _, p = read_argument(src, p)
            left, p = read_argument(src, p)
            right, p = read_argument(src, p)
        except ScanError:
            return None
        return f"\\left{left.strip()} #1 \\right{right.strip()}"
    if not d.supported:
        return None
    if d.alias_of is not None:
        return d.alias_of
    if d.prefix or any(p.kind == "d" for p in d.params):
        return None
    body = d.body
    params = list(d.params)
    if params and params[0].kind in ("O", "o"):
        default = params[0].default or ""
        body = _substitute_first(body, default)
        params = params[1:]
    nargs = len(params)
    used = {int(k) for k in re.findall(r"(?<!#)#([1-9])", body)}
    gobble = "".join(f"\\@secondoftwo{{#{k}}}{{}}" for k in range(1, nargs + 1) if k not in used)
    return gobble + body


def _substitute_first(body: str, value: str) -> str:
    """Put value for #1 and renumber #2.. to #1.."""

    def repl(m: re.Match) -> str:
        k = int(m.group(1))
        return value if k == 1 else f"#{k - 1}"

    return re.sub(r"(?<!#)#([1-9])", repl, body)


# --------------------------------------------------------------------------- pdflatex

# Unicode a generated string may carry in text or math; pdflatex's default UTF-8
# input knows accented Latin letters and common punctuation but not these.
_UNICODE_MATH = {
    "03B1": "alpha", "03B2": "beta", "03B3": "gamma", "03B4": "delta", "03B5": "epsilon", "03B6": "zeta",
    "03B7": "eta", "03B8": "theta", "03B9": "iota", "03BA": "kappa", "03BB": "lambda", "03BC": "mu",
    "03BD": "nu", "03BE": "xi", "03C0": "pi", "03C1": "rho", "03C3": "sigma", "03C4": "tau", "03C5": "upsilon",
    "03C6": "phi", "03C7": "chi", "03C8": "psi", "03C9": "omega", "0393": "Gamma", "0394": "Delta",
    "0398": "Theta", "039B": "Lambda", "039E": "Xi", "03A0": "Pi", "03A3": "Sigma", "03A6": "Phi",
    "03A8": "Psi", "03A9": "Omega", "2264": "leq", "2265": "geq", "2260": "neq", "2208": "in", "2209": "notin",
    "2282": "subset", "2286": "subseteq", "2192": "to", "21D2": "Rightarrow", "21D4": "Leftrightarrow",
    "2194": "leftrightarrow", "2190": "leftarrow", "21A6": "mapsto", "2200": "forall", "2203": "exists",
    "2205": "emptyset", "221E": "infty", "2211": "sum", "220F": "prod", "222B": "int", "2202": "partial",
    "2207": "nabla", "2229": "cap", "222A": "cup", "2248": "approx", "2261": "equiv", "223C": "sim",
    "2245": "cong", "2213": "mp", "2218": "circ", "2297": "otimes", "2295": "oplus", "22C5": "cdot",
    "2223": "mid", "2225": "parallel", "27E8": "langle", "27E9": "rangle", "2032": "prime", "2016": "Vert",
    "2227": "wedge", "2228": "vee", "00AC": "neg", "2283": "supset", "226A": "ll",
    "226B": "gg", "22A2": "vdash", "22A8": "models", "2243": "simeq",
}  # fmt: skip
_UNICODE_MATHBB = {"211D": "R", "2115": "N", "2124": "Z", "211A": "Q", "2102": "C"}

_HEADER = [
    r"\documentclass{article}",
    r"\usepackage{amsmath,amssymb,amsthm,mathtools,bm}",
    *(rf"\DeclareUnicodeCharacter{{{code}}}{{\ensuremath{{\{name}}}}}" for code, name in _UNICODE_MATH.items()),
    *(rf"\DeclareUnicodeCharacter{{{code}}}{{\ensuremath{{\mathbb{{{L}}}}}}}" for code, L in _UNICODE_MATHBB.items()),
    r"\DeclareUnicodeCharacter{00D7}{\ensuremath{\times}}",
    r"\DeclareUnicodeCharacter{00B7}{\ensuremath{\cdot}}",
    r"\DeclareUnicodeCharacter{2026}{\ldots}",
    r"\DeclareUnicodeCharacter{00A0}{~}",
    r"\DeclareUnicodeCharacter{2009}{\,}",
    r"\DeclareUnicodeCharacter{2212}{\ensuremath{-}}",
    r"\newcommand\TBCHKbegin[1]{\message{[tb-begin:#1]}}",
    r"\newcommand\TBCHKend[1]{%",
    r"  \ifmmode\errmessage{TBCHK #1: the string ends in math mode (an unclosed math delimiter)}\fi",
    r"  \ifnum\currentgrouplevel>\TBCHKlevel\relax",
    r"    \errmessage{TBCHK #1: the string leaves a group open"
    r" (an unbalanced brace or an environment without \string\end)}%",
    r"  \fi",
    r"  \message{[tb-end:#1]}}",
    r"\def\TBCHKlevel{0}",
]  # fmt: skip
_BODY_START = [r"\begin{document}", r"\edef\TBCHKlevel{\the\currentgrouplevel}\message{[tb-document]}"]
_BODY_END = [r"\message{[tb-done]}", r"\end{document}"]
_ENVIRONMENT_ERROR = re.compile(
    r"not loadable: Metric \(TFM\) file|Font .* not found|^I can't find file|"
    r"^LaTeX Error: File `[^']*\.(?:sty|cls|def|fd|cfg)' not found"
)
_ERROR_TAG = re.compile(r"^TBCHK (\d+): (.*)$")
_LINE_NO = re.compile(r"^l\.(\d+) ?(.*)$")
_BEGIN_MARK = re.compile(r"\[tb-begin:(\d+)\]")
_END_MARK = re.compile(r"\[tb-end:(\d+)\]")


@dataclass
class _Snippet:
    source: str
    lines_of: dict[int, tuple[int, int]]  # string index -> (first line, last line), 1-based inclusive
    preamble_lines: tuple[int, int]


def _build_snippet(texts: list[tuple[int, str]], preamble: str) -> _Snippet:
    lines: list[str] = list(_HEADER)
    pre_first = len(lines) + 1
    lines.extend(preamble.split("\n") if preamble else [])
    pre_last = len(lines)
    lines.extend(_BODY_START)
    lines_of: dict[int, tuple[int, int]] = {}
    for idx, text in texts:
        first = len(lines) + 1
        lines.append(rf"\TBCHKbegin{{{idx}}}%")
        lines.extend((text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        lines.append(rf"\TBCHKend{{{idx}}}")
        lines.append("")
        lines_of[idx] = (first, len(lines))
    lines.extend(_BODY_END)
    return _Snippet("\n".join(lines) + "\n", lines_of, (pre_first, pre_last))


def _tex_env(tmp: str, search: str) -> dict[str, str]:
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


@dataclass
class _Outcome:
    finished: set[int]  # strings whose end marker was reached
    failed: int | None  # the string the error is charged to (-1: preamble, -2: the check document itself)
    issue: LatexIssue | None
    timed_out: bool = False


def _compile(texts: list[tuple[int, str]], keys: dict[int, str], preamble: str, timeout_s: float) -> _Outcome:
    snippet = _build_snippet(texts, preamble)
    search = _search_path()
    pdflatex = shutil.which("pdflatex", path=search)
    assert pdflatex
    with tempfile.TemporaryDirectory(prefix="tb-latexcheck-") as tmp:
        tex = Path(tmp) / "check.tex"
        tex.write_text(snippet.source, encoding="utf-8")
        cmd = [pdflatex, "-halt-on-error", "-no-shell-escape", "-interaction=nonstopmode", "-draftmode",
               "-no-file-line-error", f"-output-directory={tmp}",
               "-jobname=check", "check.tex"]  # fmt: skip
        rc, out, _err = _run(cmd, input_text=None, timeout_s=timeout_s, cwd=tmp, env=_tex_env(tmp, search))
        logfile = Path(tmp) / "check.log"
        logtext = logfile.read_text(encoding="utf-8", errors="replace") if logfile.is_file() else ""
    # \message flushes the terminal at once; the log may lag behind when the run was killed
    text = logtext if len(logtext) >= len(out) else out
    both = logtext + "\n" + out
    finished = {int(m.group(1)) for m in _END_MARK.finditer(both)}
    begun = [int(m.group(1)) for m in _BEGIN_MARK.finditer(both)]
    current = max(begun) if begun else None  # strings are compiled in index order
    src_lines = snippet.source.split("\n")
    texts_by_idx = dict(texts)

    def charge(line_no: int | None, tagged: int | None) -> int:
        if tagged is not None:
            return tagged
        if line_no is not None:
            for idx, (a, b) in snippet.lines_of.items():
                if a <= line_no <= b:
                    return idx
            if snippet.preamble_lines[0] <= line_no <= snippet.preamble_lines[1]:
                return -1
            if line_no < snippet.preamble_lines[0]:
                return -2
        if "[tb-document]" not in both:
            return -1
        return current if current is not None else -2

    def issue_for(idx: int, message: str, line_no: int | None) -> LatexIssue:
        if idx == -1:
            where = "preamble"
        elif idx == -2:
            where = "check document"
        else:
            where = keys[idx]
        seg = ""
        if idx >= 0:
            a, b = snippet.lines_of[idx]  # a: the begin marker; b - 2 .. b: end marker and blank line
            if line_no is not None and a < line_no < b - 1:
                seg = src_lines[line_no - 1]
            if not seg.strip():
                seg = texts_by_idx.get(idx, "")
        elif line_no is not None and 0 < line_no <= len(src_lines):
            seg = src_lines[line_no - 1]
        return LatexIssue(where, _short(seg), "pdflatex", message)

    if rc is None:
        idx = charge(None, None)
        return _Outcome(finished, idx, issue_for(idx, f"pdflatex did not finish within {timeout_s:.1f} s "
                                                      "(an endless loop?)", None), timed_out=True)  # fmt: skip
    err = _first_error(text)
    if err is not None:
        message, line_no, context = err
        tagged = None
        m = _ERROR_TAG.match(message)
        if m:
            tagged, message = int(m.group(1)), m.group(2)
        elif context:
            message = f"{message} (at: {context})"
        idx = charge(line_no, tagged)
        if tagged is None and _ENVIRONMENT_ERROR.search(message):
            # the TeX installation lacks something (a font, a package file the preamble loads):
            # not the fault of the string where it surfaced
            idx = -1 if preamble.strip() else -2
            message += " (the TeX installation lacks a file)"
        return _Outcome(finished, idx, issue_for(idx, message, line_no))
    expected = {idx for idx, _ in texts}
    if rc != 0 or "[tb-done]" not in both or not expected <= finished:
        # no TeX error, yet the document did not run to its end: something in a string stopped it
        idx = charge(None, None)
        why = f"pdflatex exited with status {rc}" if rc else "the document ended early"
        why += " (\\end{document}, \\endinput or similar in the string?)"
        return _Outcome(finished, idx, issue_for(idx, why, None))
    return _Outcome(finished, None, None)


def _first_error(logtext: str) -> tuple[str, int | None, str] | None:
    """(message, line number, source context up to the error) of the first ``!`` error of a TeX log."""
    lines = logtext.split("\n")
    for k, line in enumerate(lines):
        if not line.startswith("!") or line.startswith("!  ==>"):
            continue
        message = line[1:].strip()
        if message == "Emergency stop." and k > 0 and lines[k - 1].startswith("*** "):
            message = lines[k - 1][4:].strip().strip("()")  # e.g. job aborted, no legal \end found
        elif message == "Emergency stop." and k + 1 < len(lines) and lines[k + 1].startswith("<read"):
            message = "Emergency stop: \\read from a stream that is not open (it would wait for the terminal)"
        line_no, context = None, ""
        for follow in lines[k + 1 : k + 60]:
            m = _LINE_NO.match(follow)
            if m:
                line_no = int(m.group(1))
                context = m.group(2).strip()
                if len(context) > 80:
                    context = "…" + context[-79:]
                break
        return message, line_no, context
    return None


# File, shell and output commands: flagged in a string (the compile cannot execute them anyway).
_FORBIDDEN = re.compile(
    r"\\(?:write18|write|immediate|openout|openin|closeout|closein|read|input|include|includeonly|special|"
    r"directlua|latelua|ShellEscape|pdfshellescape|endinput|documentclass|usepackage|RequirePackage)(?![A-Za-z@])"
)


def check_pdflatex(strings: dict[str, str], *, preamble: str = "", timeout_s: float = 60,
                   max_compiles: int = 8) -> LatexReport:  # fmt: skip
    """Compile all strings in one pdflatex run and report the first error, charged to its string.

    Each string is its own paragraph of a minimal article (amsmath, amssymb, amsthm,
    mathtools, bm, the sanitised ``preamble``). When a string fails, it is set aside
    and the others are compiled again, so one call finds up to ``max_compiles``
    failing strings (a valid item costs one compile). ``timeout_s`` bounds the whole
    call; one compile gets at most a third of it (at least 5 s), so a string that loops
    forever is charged with the timeout and the others are still checked. An error in
    the preamble is charged to ``"preamble"`` and ends the check. Strings left unchecked
    (budget spent, ``max_compiles`` reached) are counted in ``skipped``.
    """
    report = LatexReport(checked={"pdflatex": 0})
    reason = _pdflatex_unavailable()
    if reason:
        report.skipped.append(f"pdflatex: {reason}")
        return report
    clean = sanitize_preamble(preamble)
    keys = dict(enumerate(strings))
    for where, text in strings.items():
        hits = list(_FORBIDDEN.finditer(text or ""))
        if hits:
            names = ", ".join(dict.fromkeys(m.group(0) for m in hits))
            first = hits[0]
            report.add(LatexIssue(where, _short((text or "")[max(0, first.start() - 40) : first.end() + 60]),
                                  "pdflatex", f"uses {names}: file, shell or output commands have no place in "
                                  "an item string (they were not executed)"))  # fmt: skip
    pending = [(idx, strings[key] or "") for idx, key in keys.items()]
    if not pending and not clean:
        return report
    deadline = time.monotonic() + timeout_s
    known: set[int] = set()
    compiles = 0
    while True:
        compiles += 1
        left = deadline - time.monotonic()
        if left <= 0:
            rest = len([idx for idx, _ in pending if idx not in known])
            report.skipped.append(f"pdflatex: {rest} string(s) not checked (time budget of {timeout_s:g} s spent)")
            break
        # one looping string must not eat the whole budget of the others: a valid item compiles in well under 1 s
        try:
            outcome = _compile(pending, keys, clean, min(left, max(5.0, timeout_s / 3)))
        except OSError as exc:  # pdflatex could not be started, or the temporary directory not made
            report.skipped.append(f"pdflatex: could not run pdflatex: {exc}")
            break
        if outcome.issue is None:
            known.update(idx for idx, _ in pending)
            break
        report.add(outcome.issue)
        known.update(outcome.finished)
        if outcome.failed is not None and outcome.failed >= 0:
            known.add(outcome.failed)
        if outcome.failed is None or outcome.failed < 0:
            rest = [idx for idx, _ in pending if idx not in known]
            if rest:
                why = "timed out" if outcome.timed_out else f"the {outcome.issue.where} failed"
                report.skipped.append(f"pdflatex: {len(rest)} string(s) not checked ({why})")
            break
        pending = [(idx, t) for idx, t in pending if idx != outcome.failed]
        rest = [idx for idx, _ in pending if idx not in known]
        if not rest:
            break
        if compiles >= max_compiles:
            report.skipped.append(f"pdflatex: {len(rest)} string(s) not checked after {compiles} compiles "
                                  "(max_compiles reached)")  # fmt: skip
            break
    report.checked["pdflatex"] = len(known - {-1, -2})
    return report


# --------------------------------------------------------------------------- both


def check_item(strings: dict[str, str], *, preamble: str = "", katex_macros: dict | None = None,
               timeout_s: float = 60) -> LatexReport:  # fmt: skip
    """KaTeX and pdflatex on the strings of one item (run side by side), merged into one report.

    ``katex_macros`` defaults to :func:`katex_macros_from_preamble` of ``preamble``.
    """
    macros = katex_macros if katex_macros is not None else katex_macros_from_preamble(preamble)
    holder: dict[str, LatexReport] = {}

    def run_katex() -> None:
        try:
            holder["katex"] = check_katex(strings, macros=macros, timeout_s=timeout_s)
        except Exception as exc:  # noqa: BLE001 - reported, never raised into the caller's thread
            holder["katex"] = LatexReport(checked={"katex": 0}, skipped=[f"katex: internal error: {exc!r}"])

    thread = threading.Thread(target=run_katex, name="latexcheck-katex", daemon=True)
    thread.start()
    report = check_pdflatex(strings, preamble=preamble, timeout_s=timeout_s)
    thread.join(timeout_s + 10)
    katex = holder.get("katex") or LatexReport(checked={"katex": 0}, skipped=["katex: did not return"])
    merged = LatexReport(checked={})
    merged.merge(katex)
    merged.merge(report)
    return merged
