"""The KaTeX check: every math segment of the strings parsed by KaTeX, in one ``node`` process.

Segments are parsed the way a web viewer renders them: ``throwOnError`` semantics,
strict mode off (unicode in math is accepted), the paper's macros through KaTeX's
``macros`` option. All segments of a batch go to one ``node`` run of
``katex_check.js`` (package data next to this module).
"""

from __future__ import annotations

import json
import shutil
import tempfile

from theorembench.latex.check.engines import katex_dir, katex_script, katex_unavailable, search_path
from theorembench.latex.check.process import Limits, run_process
from theorembench.latex.check.report import LatexIssue, LatexReport, short
from theorembench.latex.check.segments import Segment, scan_math

__all__ = ["OUTPUT_CAP_BASE", "OUTPUT_CAP_PER_SEGMENT", "check_katex"]

OUTPUT_CAP_BASE = 64 << 10  # bytes of node output read, plus the same per segment ...
OUTPUT_CAP_PER_SEGMENT = 1 << 10  # ... a result line is at most about 600 bytes


def check_katex(strings: dict[str, str], *, macros: dict[str, str] | None = None,
                timeout_s: float = 30) -> LatexReport:  # fmt: skip
    """Parse every math segment of every string with KaTeX, in one node process.

    An unclosed ``$``/``\\(``/``\\[``/math environment is an issue of its own; other
    segments are handed to ``katex.renderToString`` with ``throwOnError: true``,
    ``strict: false`` and ``macros``. If node does not finish within ``timeout_s``,
    the segment it was on is an issue and the rest are reported unchecked in ``skipped``.
    """
    report = LatexReport(checked={"katex": 0})
    reason = katex_unavailable()
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
                issue = LatexIssue(where, short(seg.source(text)), "katex", seg.error)
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
    node = shutil.which("node", path=search_path())
    script, katex_pkg = katex_script(), katex_dir()
    assert node and script and katex_pkg
    payload = json.dumps({
        "katex": str(katex_pkg),
        "macros": dict(macros or {}),
        "segments": [{"tex": seg.tex, "display": seg.display} for _, seg, _ in jobs],
    })  # fmt: skip
    env = {"PATH": search_path(), "HOME": tempfile.gettempdir(), "NODE_OPTIONS": "", "LANG": "C.UTF-8"}
    # one result line per segment, its message cut to 500 characters by the script: the cap is never
    # reached by a working run; node writes no files
    ran = run_process([node, "--max-old-space-size=1024", str(script)], input_text=payload, timeout_s=timeout_s,
                      cwd=None, env=env, max_output=OUTPUT_CAP_BASE + OUTPUT_CAP_PER_SEGMENT * len(jobs),
                      limits=Limits(cpu_s=int(timeout_s) + 5, file_bytes=1 << 20))  # fmt: skip
    rc, out, err = ran.returncode, ran.out, ran.err
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
            if ran.stopped == "timeout":
                message = f"KaTeX did not finish this segment within {timeout_s:g} s"
                found.append(((order[where], seg.start), LatexIssue(where, short(seg.source(text)), "katex", message)))
                report.checked["katex"] += 1
                missing -= 1
                why = f"timed out after {timeout_s:g} s"
            elif ran.stopped:
                why = f"node stopped: {ran.stopped} limit"
            else:
                why = f"node exited with status {rc}: {short(err, 300) or 'no output'}"
            if missing:
                report.skipped.append(f"katex: {missing} segment(s) not checked ({why})")
            break
        report.checked["katex"] += 1
        if not res.get("ok"):
            issue = LatexIssue(where, short(seg.source(text)), "katex", _katex_message(res, seg.tex))
            found.append(((order[where], seg.start), issue))


def _katex_message(res: dict, tex: str) -> str:
    message = str(res.get("message") or "KaTeX error").strip()
    pos = res.get("position")
    if isinstance(pos, int) and 0 <= pos <= len(tex):
        before, after = tex[max(0, pos - 30) : pos], tex[pos : pos + 30]
        message += f" (at position {pos}: …{before}⟨here⟩{after}…)".replace("\n", " ")
    return message
