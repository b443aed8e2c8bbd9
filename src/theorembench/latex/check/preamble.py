"""The paper preamble made safe for the check document (:func:`sanitize_preamble`).

Comments are stripped; only installed notation packages of :data:`SAFE_PACKAGES`
are kept; file, shell, output and interaction commands are removed with their
arguments. Definitions are kept as written.
"""

from __future__ import annotations

import re

from theorembench.latex.check.engines import kpsewhich, search_path
from theorembench.latex.check.segments import find_env_end
from theorembench.latex.scan import ScanError, is_escaped, read_argument, read_group, read_optional, skip_space

__all__ = ["BASE_PACKAGES", "SAFE_PACKAGES", "sanitize_preamble", "strip_comments"]


def strip_comments(text: str) -> str:
    """text without its TeX comments (an unescaped ``%`` to the end of its line)."""
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
    text = strip_comments(preamble or "")
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
                            _, q3 = find_env_end(text, q2, env.strip())
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
    found = kpsewhich(search_path(), tuple(sorted(files)))
    return [x for x in wanted if f"{x}.sty" in found and _PACKAGE_FONTS.get(x, f"{x}.sty") in found]
