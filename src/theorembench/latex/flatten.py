"""Flatten a paper's LaTeX source into one text, with an exact source map.

:func:`find_main_file` picks the file to compile; :func:`flatten` follows its
inclusions and returns a :class:`FlatDocument` whose :meth:`~FlatDocument.locate`
gives, for any character of the flat text, the file and line it came from.

This module stays whole, past the 500-line rule: comment removal, conditional
skipping and inclusion-following are one pass over the text that maintains one
source map, and each rule depends on the state the others leave (a ``%`` inside an
included verbatim environment, an ``\\input`` inside ``\\iffalse``).

What is removed
    ``%`` comments (not ``\\%``, and not inside ``verbatim``-like environments,
    ``\\verb``, ``\\lstinline`` or the URL of ``\\url``/``\\href``, where ``%``
    is literal), ``comment`` environments (and those declared with
    ``\\excludecomment``), ``\\iffalse ... \\fi`` (keeping an ``\\else`` branch;
    ``\\iftrue ... \\else ... \\fi`` keeps its first branch), nesting of
    conditionals respected, and whatever follows ``\\endinput`` or, in the file
    being compiled, ``\\end{document}``. A line that held only removed material
    disappears with its line break (as in TeX, a comment line does not end a
    paragraph); other lines keep their breaks, so line structure survives.

Which inclusions are followed, and where files are looked for
    ``\\input{f}``, ``\\input f``, ``\\include{f}`` (honouring ``\\includeonly``)
    and ``\\subfile{f}``, ``\\import{dir}{f}``, ``\\subimport{dir}{f}`` and the
    ``...from`` aliases of the import package. ``.tex`` is tried first when the
    name lacks it. As in TeX, which reads files relative to the directory it runs
    in, ``\\input`` and ``\\include`` names are relative to the main file's
    folder wherever the command appears, even in a file in a subfolder (the
    folders of ``\\def\\input@path`` are tried next). The import package
    changes this: ``\\import{dir}{f}`` reads ``dir`` relative to the main
    file's folder, ``\\subimport{dir}{f}`` relative to the current import
    folder (that of the file being imported at that point; the main file's folder
    outside any import), and inside an imported file ``\\input`` searches the
    import folders, innermost first, before the main file's folder (the order of
    import.sty 6). ``\\subfile{dir/f}`` works like ``\\subimport{dir/}{f}``
    (subfiles 1.3 and later) and contributes only its document body. When TeX's
    rule finds nothing, the including file's folder and the source root are tried
    as a lenient fallback. Files outside the root are never read.
    Cycles, excessive depth, missing files and unreadable arguments are recorded
    in ``problems`` and skipped.
"""

from __future__ import annotations

import bisect
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from theorembench.latex.encoding import decode_tex
from theorembench.latex.scan import ScanError, line_starts, read_group, read_optional, skip_space

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_PREPASS_BYTES = 4 * 1024 * 1024
MAX_INCLUSIONS = 10_000
MAX_TEXT_CHARS = 200_000_000
MAX_TEX_FILES = 5_000

VERBATIM_ENVS = frozenset(
    {
        "verbatim", "verbatim*", "Verbatim", "Verbatim*", "BVerbatim", "LVerbatim", "SaveVerbatim",
        "VerbatimOut", "lstlisting", "minted", "filecontents", "filecontents*", "spverbatim",
    }
)  # fmt: skip
COMMENT_ENVS = frozenset({"comment"})
# TeX primitives (and common package switches) that open a conditional closed by \fi
PRIMITIVE_CONDITIONALS = frozenset(
    {
        "if", "ifcat", "ifnum", "ifdim", "ifodd", "ifvmode", "ifhmode", "ifmmode", "ifinner", "ifvoid",
        "ifhbox", "ifvbox", "ifx", "ifeof", "iftrue", "iffalse", "ifcase", "ifdefined", "ifcsname",
        "iffontchar", "ifincsname", "ifpdfprimitive", "ifpdfabsnum", "ifpdfabsdim", "ifabsnum", "ifabsdim",
        "ifpdf", "ifxetex", "ifluatex", "ifvtex", "iftutex", "ifpdftex", "ifPDFTeX", "ifXeTeX", "ifLuaTeX",
    }
)  # fmt: skip
MAIN_NAMES = ("main", "ms", "paper", "arxiv", "article", "manuscript")
DEMOTED_CLASSES = ("standalone", "subfiles", "beamer")
DEMOTED_NAME = re.compile(r"supp|appendix|response|rebuttal|reply|cover|letter|slides|poster|talk", re.I)

INCLUDE_COMMANDS = frozenset(
    {"input", "include", "subfile", "import", "subimport", "inputfrom", "includefrom", "subinputfrom",
     "subincludefrom"}
)  # fmt: skip
TWO_ARG_COMMANDS = frozenset({"import", "subimport", "inputfrom", "includefrom", "subinputfrom", "subincludefrom"})
VERBATIM_COMMANDS = frozenset({"verb", "Verb", "lstinline", "mintinline", "url", "nolinkurl", "href"})

_TOKEN = re.compile(r"[\\%]")
_CS = re.compile(r"\\(?:([A-Za-z@]+)|(.))", re.S)
_ENV_NAME = re.compile(r"[ \t]*\{([^{}\n]*)\}")
_COND_TOKEN = re.compile(r"[\\%{}]")
_ASSIGNED_BEFORE = re.compile(r"(?:\\let\s*\\[A-Za-z@]+|\\endcsname|\\def\s*\\[A-Za-z@]+)\s*=?\s*$")
_PLAIN_INPUT_NAME = re.compile(r"[^\s{}%\\$#]+")
_DOCUMENTCLASS = re.compile(r"\\document(?:class|style)\b\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")
_BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_TEX_ROOT = re.compile(r"^\s*%\s*!\s*tex\s+root\s*=\s*(\S.*?)\s*$", re.I | re.M)


# --------------------------------------------------------------------------- the result


@dataclass
class FlatDocument:
    """One LaTeX text from a paper's files, and where each of its characters came from.

    ``segments`` is the source map: ``(offset in text, index into files, 1-based
    line)``, one entry wherever the text stops following its source line by
    line; within a segment each line break of ``text`` is one line of the file.
    """

    text: str
    main_file: str | None
    files: list[str] = field(default_factory=list)  # relative POSIX paths, in inclusion order
    problems: list[str] = field(default_factory=list)
    segments: list[tuple[int, int, int]] = field(default_factory=list)
    encodings: dict[str, str] = field(default_factory=dict)  # file -> encoding used to decode it
    _starts: list[int] | None = field(default=None, init=False, repr=False, compare=False)
    _offsets: list[int] | None = field(default=None, init=False, repr=False, compare=False)

    def locate(self, offset: int) -> tuple[str, int]:
        """(relative file, 1-based line) that produced ``text[offset]`` (``len(text)`` is allowed)."""
        if not self.segments:
            raise ValueError("empty document: nothing to locate")
        if not 0 <= offset <= len(self.text):
            raise ValueError(f"offset {offset} outside the text (length {len(self.text)})")
        if self._starts is None or self._offsets is None:
            self._starts = line_starts(self.text)
            self._offsets = [s[0] for s in self.segments]
        k = max(0, bisect.bisect_right(self._offsets, offset) - 1)
        seg_offset, file_index, line = self.segments[k]
        lines_between = bisect.bisect_right(self._starts, offset) - bisect.bisect_right(self._starts, seg_offset)
        return self.files[file_index], line + lines_between

    def to_dict(self) -> dict:
        return {
            "main_file": self.main_file,
            "files": list(self.files),
            "problems": list(self.problems),
            "encodings": dict(self.encodings),
            "source_map": [list(s) for s in self.segments],
            "text": self.text,
        }

    @classmethod
    def from_dict(cls, data: dict) -> FlatDocument:
        return cls(
            text=data["text"],
            main_file=data.get("main_file"),
            files=list(data.get("files", [])),
            problems=list(data.get("problems", [])),
            segments=[tuple(s) for s in data.get("source_map", [])],
            encodings=dict(data.get("encodings", {})),
        )


# --------------------------------------------------------------------------- scanning one file


@dataclass(frozen=True)
class _Directive:
    command: str  # an INCLUDE_COMMANDS name, "includeonly" or "inputpath"
    args: tuple[str, ...]
    line: int


@dataclass
class _Unit:
    """One source file, cleaned: kept text pieces, inclusion directives and document markers."""

    path: str
    text: str
    encoding: str
    items: list[tuple]  # ("t", start, end, line) | ("d", _Directive) | ("m", marker)
    problems: list[str]
    has_body: bool  # has \begin{document}

    def kept_text(self) -> str:
        return "".join(self.text[it[1] : it[2]] for it in self.items if it[0] == "t")

    def directives(self) -> list[_Directive]:
        return [it[1] for it in self.items if it[0] == "d"]


@dataclass(frozen=True)
class _Syntax:
    """What the whole source declares: verbatim-like and comment environments, \\newif switches."""

    verbatim: frozenset[str] = VERBATIM_ENVS
    comment: frozenset[str] = COMMENT_ENVS
    conditionals: frozenset[str] = PRIMITIVE_CONDITIONALS


_DECL_VERBATIM = re.compile(
    r"\\(?:lstnewenvironment|DefineVerbatimEnvironment|newtcblisting|NewTCBListing|DeclareTCBListing"
    r"|RenewTCBListing|renewtcblisting)\s*\*?\s*\{\s*([^{}\s]+)\s*\}"
)
_DECL_MINTED = re.compile(r"\\newminted\s*(?:\[\s*([^\]\s]+)\s*\])?\s*\{\s*([^{}\s]+)\s*\}")
_DECL_EXCLUDE = re.compile(r"\\excludecomment\s*\{\s*([^{}\s]+)\s*\}")
_DECL_INCLUDE = re.compile(r"\\includecomment\s*\{\s*([^{}\s]+)\s*\}")
_DECL_NEWIF = re.compile(r"\\newif\s*\\(if[A-Za-z@]+)")
_QUICK_COMMENT = re.compile(r"(?<!\\)%.*")


def _declared_syntax(texts: list[str]) -> _Syntax:
    verbatim, comment, conditionals = set(VERBATIM_ENVS), set(COMMENT_ENVS), set(PRIMITIVE_CONDITIONALS)
    included: set[str] = set()
    for raw in texts:
        text = _QUICK_COMMENT.sub("", raw)
        verbatim.update(_DECL_VERBATIM.findall(text))
        for env, lang in _DECL_MINTED.findall(text):
            verbatim.add(env or f"{lang}code")
        comment.update(_DECL_EXCLUDE.findall(text))
        included.update(_DECL_INCLUDE.findall(text))
        conditionals.update(_DECL_NEWIF.findall(text))
    comment -= included
    conditionals -= {"iff", "ifthenelse"}
    return _Syntax(frozenset(verbatim - comment), frozenset(comment), frozenset(conditionals))


def _line_of(starts: list[int], pos: int) -> int:
    return bisect.bisect_right(starts, pos)


class _Scanner:
    """Finds what to remove, the inclusion directives and the document markers of one file."""

    def __init__(self, text: str, syntax: _Syntax) -> None:
        self.text = text
        self.n = len(text)
        self.syntax = syntax
        self.starts = line_starts(text)
        self.removed: list[tuple[int, int]] = []
        self.events: list[tuple[int, int, int, object]] = []  # (start, end, order, payload)
        self.problems: list[str] = []
        self.skips: dict[int, int] = {}

    def line(self, pos: int) -> int:
        return _line_of(self.starts, pos)

    def run(self) -> None:
        text, n = self.text, self.n
        limit = n
        i = 0
        while i < limit:
            if i in self.skips:
                i = self.skips.pop(i)
                continue
            m = _TOKEN.search(text, i, limit)
            if not m:
                break
            j = m.start()
            if j in self.skips:
                i = self.skips.pop(j)
                continue
            if text[j] == "%":
                eol = text.find("\n", j)
                eol = n if eol < 0 else eol
                self.removed.append((j, eol))
                i = eol
                continue
            cs = _CS.match(text, j)
            if cs is None:  # a lone backslash at the very end
                break
            word = cs.group(1)
            k = cs.end()
            if word is None:
                i = k
                continue
            if word == "begin":
                i = self._begin(j, k)
            elif word == "end":
                m_env = _ENV_NAME.match(text, k)
                if m_env and m_env.group(1).strip() == "document":
                    self.events.append((j, j, 0, "body_end"))
                    self.events.append((m_env.end(), m_env.end(), 1, "end_doc"))
                i = m_env.end() if m_env else k
            elif word in VERBATIM_COMMANDS:
                i = self._verbatim_command(word, k)
            elif word in ("iffalse", "iftrue"):
                i = self._conditional(word, j, k)
            elif word == "endinput":
                eol = text.find("\n", k)
                limit = n if eol < 0 else eol + 1
                i = k
            elif word in INCLUDE_COMMANDS or word == "includeonly":
                i = self._directive(word, j, k)
            elif word in ("def", "gdef", "edef", "xdef"):
                i = self._input_path(j, k)
            else:
                i = k
        if limit < n:
            self.removed.append((limit, n))

    # -- pieces -------------------------------------------------------------------------

    def _begin(self, j: int, k: int) -> int:
        text = self.text
        m_env = _ENV_NAME.match(text, k)
        if not m_env:
            return k
        env = m_env.group(1).strip()
        after = m_env.end()
        if env in self.syntax.comment or env in self.syntax.verbatim:
            end_tag = "\\end{" + env + "}"
            e = text.find(end_tag, after)
            if e < 0:
                self.problems.append(f"line {self.line(j)}: {env} environment never closed")
                if env in self.syntax.comment:
                    self.removed.append((j, self.n))
                return self.n
            if env in self.syntax.comment:
                self.removed.append((j, e + len(end_tag)))
            return e + len(end_tag)
        if env == "document":
            self.events.append((j, j, 0, "begin_doc"))
            self.events.append((after, after, 1, "body_start"))
        return after

    def _verbatim_command(self, word: str, k: int) -> int:
        """Skip the verbatim argument of \\verb, \\lstinline, \\url ... (its % is not a comment)."""
        text = self.text
        if word == "verb":
            if k < self.n and text[k] == "*":
                k += 1
            return self._delimited(k) or k
        if word in ("lstinline", "Verb", "mintinline"):
            try:
                _, k = read_optional(text, k)
                if word == "mintinline":
                    k = skip_space(text, k, newlines=False)
                    _, k = read_group(text, k)
            except ScanError:
                return k
            return self._delimited(k) or k
        if word == "href":
            try:
                _, k = read_optional(text, k)
            except ScanError:
                return k
        k2 = skip_space(text, k, newlines=False)
        if k2 < self.n and text[k2] == "{":  # \url{...}, \href{URL}{text}: only the URL is raw
            return self._raw_group(k2) or k
        return k

    def _delimited(self, k: int) -> int | None:
        """A ``|...|``-style argument on one line (or ``{...}``); the index after it."""
        text = self.text
        if k >= self.n:
            return None
        delim = text[k]
        if delim == "{":
            return self._raw_group(k)
        if delim.isalpha() or delim.isspace():
            return None
        e = text.find(delim, k + 1)
        eol = text.find("\n", k + 1)
        if e < 0 or (0 <= eol < e):
            return None
        return e + 1

    def _raw_group(self, k: int) -> int | None:
        """A brace group read verbatim (backslashes and % literal) on one line; the index after it."""
        depth = 0
        for p in range(k, self.n):
            c = self.text[p]
            if c == "\n":
                return None
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return p + 1
        return None

    def _conditional(self, word: str, j: int, k: int) -> int:
        """\\iffalse / \\iftrue ... [\\else ...] \\fi: drop the false branch."""
        text = self.text
        if _ASSIGNED_BEFORE.search(text, max(0, j - 120), j):
            return k  # \let\ifsomething\iffalse: an assignment, not a conditional
        found = self._match_fi(k)
        if isinstance(found, str):
            if found == "no-fi":
                self.problems.append(f"line {self.line(j)}: \\{word} without a matching \\fi (left in place)")
            return k
        else_span, fi_span = found
        if word == "iffalse":
            if else_span is None:
                self.removed.append((j, fi_span[1]))
                return fi_span[1]
            self.removed.append((j, else_span[1]))
            self.removed.append(fi_span)
            return else_span[1]
        # \iftrue: keep the first branch
        self.removed.append((j, k))
        if else_span is None:
            self.removed.append(fi_span)
        else:
            self.removed.append((else_span[0], fi_span[1]))
            self.skips[else_span[0]] = fi_span[1]
        return k

    def _match_fi(self, k: int):
        """Find the \\else and \\fi closing a conditional opened just before k.

        Returns (else span or None, fi span), or "no-fi" / "unbalanced" when the
        text is no conditional block (e.g. \\iffalse inside a definition).
        """
        text = self.text
        depth = 0
        brace = 0
        else_span: tuple[int, int] | None = None
        i = k
        while True:
            m = _COND_TOKEN.search(text, i)
            if not m:
                return "no-fi"
            p = m.start()
            c = text[p]
            if c == "%":
                eol = text.find("\n", p)
                if eol < 0:
                    return "no-fi"
                i = eol + 1
                continue
            if c in "{}":
                brace += 1 if c == "{" else -1
                if brace < 0:
                    return "unbalanced"
                i = p + 1
                continue
            cs = _CS.match(text, p)
            if cs is None:
                return "no-fi"
            word = cs.group(1)
            i = cs.end()
            if word is None:
                continue
            if word in self.syntax.conditionals:
                depth += 1
            elif word == "fi":
                if depth == 0:
                    if brace != 0:
                        return "unbalanced"
                    return else_span, (p, cs.end())
                depth -= 1
            elif word == "else" and depth == 0 and else_span is None:
                if brace != 0:
                    return "unbalanced"
                else_span = (p, cs.end())

    def _directive(self, word: str, j: int, k: int) -> int:
        text = self.text
        line = self.line(j)
        try:
            if word == "input":
                p = skip_space(text, k)
                if p < self.n and text[p] == "{":
                    name, end = read_group(text, p)
                else:
                    m = _PLAIN_INPUT_NAME.match(text, p)  # TeX's own syntax: \input file.tex
                    if not m:
                        return k
                    name, end = m.group(0), m.end()
                args: tuple[str, ...] = (name,)
            else:
                if word in TWO_ARG_COMMANDS and text[k : k + 1] == "*":
                    k += 1
                p = skip_space(text, k)
                if p >= self.n or text[p] != "{":
                    return k
                first, end = read_group(text, p)
                args = (first,)
                if word in TWO_ARG_COMMANDS:
                    p = skip_space(text, end)
                    if p >= self.n or text[p] != "{":
                        return end
                    second, end = read_group(text, p)
                    args = (first, second)
        except ScanError:
            self.problems.append(f"line {line}: unbalanced argument of \\{word}")
            return k
        if any("#" in a or "\\" in a for a in args):
            if word != "includeonly":
                self.problems.append(f"line {line}: \\{word} with a computed argument {{{args[-1]}}} not followed")
            return end
        self.events.append((j, end, 1, _Directive(word, tuple(a.strip() for a in args), line)))
        return end

    def _input_path(self, j: int, k: int) -> int:
        """\\def\\input@path{{dir1/}{dir2/}}: extra folders for \\input."""
        text = self.text
        p = skip_space(text, k, newlines=False)
        if not text.startswith("\\input@path", p):
            return k
        q = skip_space(text, p + len("\\input@path"), newlines=False)
        try:
            inner, end = read_group(text, q)
        except ScanError:
            return k
        folders: list[str] = []
        pos = 0
        while True:
            pos = skip_space(inner, pos)
            if pos >= len(inner) or inner[pos] != "{":
                break
            try:
                folder, pos = read_group(inner, pos)
            except ScanError:
                break
            folders.append(folder.strip())
        self.events.append((j, j, 1, _Directive("inputpath", tuple(folders), self.line(j))))
        return end

    # -- assembling ---------------------------------------------------------------------

    def final_removals(self) -> list[tuple[int, int]]:
        """Merge the removals; a line left blank by them goes entirely, with its line break."""
        merged = _merge(self.removed)
        if not merged:
            return merged
        text, starts, n = self.text, self.starts, self.n
        range_starts = [s for s, _ in merged]

        def bounds(pos: int) -> tuple[int, int]:
            li = bisect.bisect_right(starts, pos) - 1
            return starts[li], (starts[li + 1] if li + 1 < len(starts) else n)

        def blank_after(ls: int, le: int) -> bool:
            content_end = le - 1 if le > ls and text[le - 1] == "\n" else le
            k = max(0, bisect.bisect_right(range_starts, ls) - 1)
            pos = ls
            while k < len(merged) and merged[k][0] < content_end:
                s, e = merged[k]
                k += 1
                if e <= pos:
                    continue
                if s > pos and text[pos:s].strip():
                    return False
                pos = max(pos, e)
            return pos >= content_end or not text[pos:content_end].strip()

        extra: list[tuple[int, int]] = []
        checked: set[int] = set()
        for s, e in merged:
            for p in (s, max(s, e - 1)):
                ls, le = bounds(p)
                if ls in checked:
                    continue
                checked.add(ls)
                if text[ls:le].strip() and blank_after(ls, le):
                    extra.append((ls, le))
        return _merge(merged + extra)

    def items(self) -> list[tuple]:
        cuts: list[tuple[int, int, int, object]] = [(s, e, 2, None) for s, e in self.final_removals()]
        cuts.extend(self.events)
        cuts.sort(key=lambda c: (c[0], c[2]))
        items: list[tuple] = []
        pos = 0
        for start, end, _, payload in cuts:
            if start > pos:
                items.append(("t", pos, start, self.line(pos)))
            if isinstance(payload, _Directive):
                items.append(("d", payload))
            elif isinstance(payload, str):
                items.append(("m", payload))
            pos = max(pos, end)
        if pos < self.n:
            items.append(("t", pos, self.n, self.line(pos)))
        return items


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(r for r in ranges if r[1] > r[0]):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _scan_file(path: str, data: bytes, syntax: _Syntax) -> _Unit:
    text, encoding = decode_tex(data)
    text = _normalise_newlines(text)
    scanner = _Scanner(text, syntax)
    scanner.run()
    items = scanner.items()
    has_body = any(it[0] == "m" and it[1] == "body_start" for it in items)
    problems = [f"{path}: {p}" for p in scanner.problems]
    return _Unit(path, text, encoding, items, problems, has_body)


# --------------------------------------------------------------------------- the source tree


def _norm(path: str) -> str | None:
    """Normalise a relative POSIX path; None when it leaves the root or is absolute."""
    if not path:
        return ""
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        return None
    p = posixpath.normpath(path)
    if p == ".." or p.startswith("../"):
        return None
    return "" if p == "." else p


def _join(folder: str, name: str) -> str | None:
    if name.startswith("/"):
        return None
    return _norm(posixpath.join(folder, name) if folder else name)


def _strip_name(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1].strip()
    return name


def _variants(name: str) -> list[str]:
    return [name] if name.lower().endswith(".tex") else [name + ".tex", name]


class _Tree:
    """A source folder: its files, their cleaned units (cached) and its declared syntax."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.real = self.root.resolve()
        self.units: dict[str, _Unit] = {}
        self.read_errors: dict[str, str] = {}
        self._syntax: _Syntax | None = None
        self._tex: list[str] | None = None

    def walk(self, suffixes: tuple[str, ...]) -> list[str]:
        found: list[str] = []
        for folder, dirs, names in os.walk(self.real):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d)))
            rel_folder = os.path.relpath(folder, self.real)
            for name in sorted(names):
                if name.lower().endswith(suffixes) and not os.path.islink(os.path.join(folder, name)):
                    rel = name if rel_folder == "." else f"{rel_folder}/{name}".replace(os.sep, "/")
                    found.append(rel)
                    if len(found) >= MAX_TEX_FILES:
                        return found
        return found

    @property
    def tex_files(self) -> list[str]:
        if self._tex is None:
            self._tex = self.walk((".tex", ".ltx"))
        return self._tex

    @property
    def syntax(self) -> _Syntax:
        if self._syntax is None:
            texts: list[str] = []
            for rel in self.walk((".tex", ".ltx", ".sty", ".cls", ".def")):
                path = self.real / rel
                try:
                    if path.stat().st_size <= MAX_PREPASS_BYTES:
                        texts.append(decode_tex(path.read_bytes())[0])
                except OSError:
                    continue
            self._syntax = _declared_syntax(texts)
        return self._syntax

    def is_file(self, rel: str) -> bool:
        path = self.real / rel
        try:
            return path.is_file() and path.resolve().is_relative_to(self.real)
        except OSError:
            return False

    def unit(self, rel: str) -> _Unit | None:
        if rel in self.units:
            return self.units[rel]
        if rel in self.read_errors:
            return None
        path = self.real / rel
        try:
            if not path.resolve().is_relative_to(self.real):
                raise OSError("outside the source folder")
            if path.stat().st_size > MAX_FILE_BYTES:
                raise OSError(f"larger than {MAX_FILE_BYTES} bytes")
            data = path.read_bytes()
        except OSError as e:
            self.read_errors[rel] = str(e.strerror or e)
            return None
        unit = _scan_file(rel, data, self.syntax)
        self.units[rel] = unit
        return unit

    def find(self, folders: list[str | None], name: str) -> tuple[str | None, str | None, bool]:
        """First existing file for name in folders: (path, its folder, whether a candidate left the root)."""
        outside = False
        seen: set[str] = set()
        for folder in folders:
            if folder is None:
                continue
            for variant in _variants(name):
                rel = _join(folder, variant)
                if rel is None:
                    outside = True
                    continue
                if rel in seen:
                    continue
                seen.add(rel)
                if self.is_file(rel):
                    return rel, folder, outside
        return None, None, outside


# --------------------------------------------------------------------------- main file


def find_main_file(root: Path) -> tuple[str | None, list[str]]:
    """The file to compile, and all candidates (best first).

    Candidates are ``.tex`` files with ``\\documentclass`` (or ``\\documentstyle``)
    and ``\\begin{document}`` outside comments. Among several: one that no other
    file includes, then one not marked as a part (``standalone``, ``subfiles`` or
    ``beamer`` class, a ``% !TeX root`` naming another file, a supplement-like
    name), then a conventional name (main, ms, paper, arxiv...), then the largest.
    """
    return _find_main(_Tree(Path(root)))


def _find_main(tree: _Tree) -> tuple[str | None, list[str]]:
    candidates: list[str] = []
    included: set[str] = set()
    for rel in tree.tex_files:
        unit = tree.unit(rel)
        if unit is None:
            continue
        kept = unit.kept_text()
        if _DOCUMENTCLASS.search(kept) and _BEGIN_DOCUMENT.search(kept):
            candidates.append(rel)
        folder = posixpath.dirname(rel)
        for d in unit.directives():
            if d.command not in INCLUDE_COMMANDS:
                continue
            if d.command in TWO_ARG_COMMANDS:
                given = _strip_name(d.args[0])
                name, places = _strip_name(d.args[1]), [_join(folder, given), _norm(given)]
            else:
                name, places = _strip_name(d.args[0]), [folder, ""]
            target, _, _ = tree.find(places, name)
            if target and target != rel:
                included.add(target)
    if not candidates:
        return None, []

    def key(rel: str) -> tuple:
        unit = tree.units[rel]
        m = _DOCUMENTCLASS.search(unit.kept_text())
        cls = m.group(1).strip() if m else ""
        stem = posixpath.splitext(posixpath.basename(rel))[0]
        demoted = cls in DEMOTED_CLASSES or bool(DEMOTED_NAME.search(stem))
        magic = _TEX_ROOT.search(unit.text[:4000])
        if magic:
            target = _join(posixpath.dirname(rel), magic.group(1).strip().strip('"'))
            if target is not None and target != rel and tree.is_file(target):
                demoted = True
        name_rank = MAIN_NAMES.index(stem.lower()) if stem.lower() in MAIN_NAMES else len(MAIN_NAMES)
        try:
            size = (tree.real / rel).stat().st_size
        except OSError:
            size = 0
        return (rel in included, demoted, name_rank, -size, rel)

    ranked = sorted(candidates, key=key)
    return ranked[0], ranked


# --------------------------------------------------------------------------- flattening


def flatten(root: Path, main: str | None = None, *, max_depth: int = 20) -> FlatDocument:
    """Flatten the paper under ``root`` starting at ``main`` (found with :func:`find_main_file` if None)."""
    tree = _Tree(Path(root))
    problems: list[str] = []
    if main is None:
        main, candidates = _find_main(tree)
        if main is None:
            problem = "no main file: no .tex file has \\documentclass and \\begin{document}"
            return FlatDocument("", None, problems=[problem])
    else:
        rel = _norm(str(main).replace(os.sep, "/"))
        if rel is None or not tree.is_file(rel):
            return FlatDocument("", None, problems=[f"main file {main!r} not found inside the source folder"])
        main = rel
    flattener = _Flattener(tree, main, max_depth=min(max(max_depth, 0), 200))
    flattener.problems.extend(problems)
    return flattener.run()


class _Flattener:
    def __init__(self, tree: _Tree, main: str, *, max_depth: int) -> None:
        self.tree = tree
        self.main = main
        self.main_dir = posixpath.dirname(main)
        self.max_depth = max_depth
        self.files: list[str] = []
        self.index: dict[str, int] = {}
        self.problems: list[str] = []
        self.parts: list[str] = []
        self.length = 0
        self.segments: list[tuple[int, int, int]] = []
        self.expect: tuple[int, int] | None = None
        self.includeonly: set[str] | None = None
        self.input_path: list[str] = []
        self.inclusions = 0
        self.stopped = False

    def run(self) -> FlatDocument:
        unit = self.tree.unit(self.main)
        if unit is None:
            self.problems.append(f"cannot read {self.main}: {self.tree.read_errors.get(self.main, 'unknown error')}")
        else:
            self.emit(unit, _Import(), (self.main,), 0, body_only=False)
        encodings = {f: self.tree.units[f].encoding for f in self.files if f in self.tree.units}
        for f in self.files:
            self.problems.extend(self.tree.units[f].problems)
        return FlatDocument(
            text="".join(self.parts),
            main_file=self.main,
            files=list(self.files),
            problems=self.problems,
            segments=self.segments,
            encodings=encodings,
        )

    def append(self, s: str, file_index: int, line: int) -> None:
        if not s:
            return
        if self.length + len(s) > MAX_TEXT_CHARS:
            self.problems.append(f"flattened text over {MAX_TEXT_CHARS} characters; stopped")
            self.stopped = True
            return
        if self.expect != (file_index, line):
            self.segments.append((self.length, file_index, line))
        self.parts.append(s)
        self.length += len(s)
        self.expect = (file_index, line + s.count("\n"))

    def emit(self, unit: _Unit, ctx: _Import, chain: tuple[str, ...], depth: int, *, body_only: bool) -> None:
        if unit.path not in self.index:
            self.index[unit.path] = len(self.files)
            self.files.append(unit.path)
        file_index = self.index[unit.path]
        active = not (body_only and unit.has_body)
        started = False
        for item in unit.items:
            if self.stopped:
                return
            tag = item[0]
            if tag == "m":
                marker = item[1]
                if body_only:
                    if marker == "body_start" and not started:
                        active = started = True
                    elif marker == "body_end" and active:
                        return
                elif marker == "end_doc":
                    self.stopped = True
                    return
            elif not active:
                continue
            elif tag == "t":
                _, start, end, line = item
                self.append(unit.text[start:end], file_index, line)
            else:
                self.follow(item[1], unit, ctx, chain, depth)

    def follow(self, d: _Directive, unit: _Unit, ctx: _Import, chain: tuple[str, ...], depth: int) -> None:
        where = f"{unit.path} line {d.line}"
        if d.command == "includeonly":
            self.includeonly = {_include_key(x) for x in d.args[0].split(",") if x.strip()}
            return
        if d.command == "inputpath":
            self.input_path = [f for f in (_join(self.main_dir, a) for a in d.args) if f is not None]
            return
        shown = "\\" + d.command + "".join("{" + a + "}" for a in d.args)
        here = posixpath.dirname(unit.path)
        if d.command in ("input", "include"):
            name = _strip_name(d.args[0])
            given = ""
            folders: list[str | None] = [*ctx.search, self.main_dir, *self.input_path, here, ""]
        else:
            if d.command == "subfile":  # \subfile{dir/f} is \subimport{dir/}{f} (subfiles >= 1.3)
                path = _strip_name(d.args[0])
                given, name = posixpath.dirname(path), posixpath.basename(path)
            else:
                given, name = _strip_name(d.args[0]), _strip_name(d.args[1])
            relative = d.command == "subfile" or d.command.startswith("sub")
            base = ctx.path if relative and ctx.path is not None else self.main_dir
            primary = _join(base, given)
            if primary is None:
                self.problems.append(f"{where}: {shown} points outside the source folder; not read")
                return
            # then the enclosing import folders (import.sty keeps them on \input@path), then leniency
            folders = [primary, *(_join(s, given) for s in ctx.search), _join(here, given), _norm(given)]
        if d.command.endswith("include") or d.command.endswith("includefrom"):
            if self.includeonly is not None and _include_key(name) not in self.includeonly:
                return
        if not name:
            self.problems.append(f"{where}: {shown} has an empty file name")
            return
        target, folder, outside = self.tree.find(folders, name)
        if target is None:
            if outside:
                self.problems.append(f"{where}: {shown} points outside the source folder; not read")
            else:
                self.problems.append(f"{where}: {shown}: file not found")
            return
        if target in chain:
            cycle = " -> ".join((*chain, target))
            self.problems.append(f"{where}: {shown} makes an inclusion cycle ({cycle}); skipped")
            return
        if depth + 1 > self.max_depth:
            self.problems.append(f"{where}: {shown} exceeds the maximum inclusion depth {self.max_depth}; skipped")
            return
        self.inclusions += 1
        if self.inclusions > MAX_INCLUSIONS:
            self.problems.append(f"more than {MAX_INCLUSIONS} inclusions; stopped")
            self.stopped = True
            return
        sub_unit = self.tree.unit(target)
        if sub_unit is None:
            self.problems.append(f"{where}: cannot read {target}: {self.tree.read_errors.get(target, 'error')}")
            return
        if d.command in ("input", "include"):
            new_ctx = ctx
        else:  # the import path becomes the folder the file was found in
            found = folder or ""
            new_ctx = _Import(found, (found, *(s for s in ctx.search if s != found)))
        self.emit(sub_unit, new_ctx, (*chain, target), depth + 1, body_only=d.command == "subfile")


@dataclass(frozen=True)
class _Import:
    """The import package's state: the current import folder and the folders searched by \\input."""

    path: str | None = None
    search: tuple[str, ...] = ()


def _include_key(name: str) -> str:
    name = _strip_name(name)
    return name[:-4] if name.lower().endswith(".tex") else name
