"""The pdflatex check: all strings compiled in one run, the first error mapped back to its string.

This is the authoritative check. pdflatex runs with ``-no-shell-escape
-halt-on-error -interaction=nonstopmode -draftmode`` in a fresh temporary directory
with the minimal environment of :func:`~theorembench.latex.check.engines.tex_env`,
stdin closed, under a timeout. The first error of the log (its ``! ...`` line and
``l.<n>``) is charged to the string it came from; that string is set aside and the
others are compiled again.

Bounded output
    A string can make TeX print without end (``\\loop\\message{..}\\repeat``, tracing)
    at tens of MB/s. Terminal output is kept (nonstopmode, not batchmode: TeX flushes
    the terminal at once, so after a kill it still says which string was running)
    but at most :data:`OUTPUT_CAP` bytes of it are read: past that the run is killed
    and the running string charged with an output-limit issue. The log is capped on
    disk by the file-size limit :data:`LOG_LIMIT` (the kernel stops pdflatex past
    it), and only its first :data:`LOG_HEAD` bytes are read. pdflatex also runs
    under a CPU-time and an address-space limit (:data:`MEMORY_LIMIT`).
"""

from __future__ import annotations

import math
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from theorembench.latex.check.engines import pdflatex_unavailable, search_path, tex_env
from theorembench.latex.check.pdflatex_document import build_check_document
from theorembench.latex.check.preamble import sanitize_preamble
from theorembench.latex.check.process import Limits, run_process
from theorembench.latex.check.report import LatexIssue, LatexReport, short

__all__ = ["LOG_HEAD", "LOG_LIMIT", "MEMORY_LIMIT", "OUTPUT_CAP", "check_pdflatex"]

OUTPUT_CAP = 1 << 20  # bytes of terminal output read from one compile (a valid item writes a few KB)
LOG_HEAD = 256 << 10  # bytes of the log read (the first error is looked for there, then in the terminal output)
LOG_LIMIT = 16 << 20  # the largest file pdflatex may write (its log): past it the kernel stops it
MEMORY_LIMIT = 4 << 30  # address space of pdflatex (it uses a few hundred MB at most)

_ENVIRONMENT_ERROR = re.compile(
    r"not loadable: Metric \(TFM\) file|Font .* not found|^I can't find file|"
    r"^LaTeX Error: File `[^']*\.(?:sty|cls|def|fd|cfg)' not found"
)
_ERROR_TAG = re.compile(r"^TBCHK (\d+): (.*)$")
_LINE_NO = re.compile(r"^l\.(\d+) ?(.*)$")
_BEGIN_MARK = re.compile(r"\[tb-begin:(\d+)\]")
_END_MARK = re.compile(r"\[tb-end:(\d+)\]")


@dataclass
class _Outcome:
    finished: set[int]  # strings whose end marker was reached
    failed: int | None  # the string the error is charged to (-1: preamble, -2: the check document itself)
    issue: LatexIssue | None
    stopped: str | None = None  # why the run was killed: "timeout", "output", "file size", "cpu time"


def _read_head(path: Path, limit: int) -> str:
    """The first limit bytes of a file, decoded; "" when there is no file."""
    try:
        with path.open("rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def _compile(texts: list[tuple[int, str]], keys: dict[int, str], preamble: str, timeout_s: float) -> _Outcome:
    snippet = build_check_document(texts, preamble)
    search = search_path()
    pdflatex = shutil.which("pdflatex", path=search)
    assert pdflatex
    with tempfile.TemporaryDirectory(prefix="tb-latexcheck-") as tmp:
        tex = Path(tmp) / "check.tex"
        tex.write_text(snippet.source, encoding="utf-8")
        cmd = [pdflatex, "-halt-on-error", "-no-shell-escape", "-interaction=nonstopmode", "-draftmode",
               "-no-file-line-error", f"-output-directory={tmp}",
               "-jobname=check", "check.tex"]  # fmt: skip
        limits = Limits(cpu_s=math.ceil(timeout_s) + 5, file_bytes=LOG_LIMIT, memory_bytes=MEMORY_LIMIT)
        ran = run_process(cmd, input_text=None, timeout_s=timeout_s, cwd=tmp, env=tex_env(tmp, search),
                          max_output=OUTPUT_CAP, limits=limits)  # fmt: skip
        rc, out = ran.returncode, ran.out
        logtext = _read_head(Path(tmp) / "check.log", LOG_HEAD)
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
        return LatexIssue(where, short(seg), "pdflatex", message)

    if ran.stopped is not None:
        idx = charge(None, None)
        if ran.stopped in ("timeout", "cpu time"):
            why = f"pdflatex did not finish within {timeout_s:.1f} s (an endless loop?)"
        else:
            limit = f"{OUTPUT_CAP >> 10} KB of output" if ran.stopped == "output" else f"a {LOG_LIMIT >> 10} KB log"
            why = f"output limit: pdflatex was stopped past {limit} (an endless \\message or tracing loop?)"
        return _Outcome(finished, idx, issue_for(idx, why, None), stopped=ran.stopped)
    err = _first_error(text) or (_first_error(out) if text is not out else None)
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
    reason = pdflatex_unavailable()
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
            report.add(LatexIssue(where, short((text or "")[max(0, first.start() - 40) : first.end() + 60]),
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
                why = f"stopped: {outcome.stopped}" if outcome.stopped else f"the {outcome.issue.where} failed"
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
