"""The entry point: KaTeX and pdflatex on the strings of one item, side by side, in one report.

:func:`check_item` blocks while the engines run (up to ``timeout_s``);
:func:`check_item_async` is the same check for code on an event loop: it runs in a
worker thread, so every other task of the loop (model calls in flight) goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import threading

from theorembench.latex.check.katex import check_katex
from theorembench.latex.check.katex_macros import katex_macros_from_preamble
from theorembench.latex.check.pdflatex import check_pdflatex
from theorembench.latex.check.report import LatexReport

__all__ = ["check_item", "check_item_async"]


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

    thread = threading.Thread(target=run_katex, name="latex-check-katex", daemon=True)
    thread.start()
    report = check_pdflatex(strings, preamble=preamble, timeout_s=timeout_s)
    thread.join(timeout_s + 10)
    katex = holder.get("katex") or LatexReport(checked={"katex": 0}, skipped=["katex: did not return"])
    merged = LatexReport(checked={})
    merged.merge(katex)
    merged.merge(report)
    return merged


async def check_item_async(strings: dict[str, str], *, preamble: str = "", katex_macros: dict | None = None,
                           timeout_s: float = 60) -> LatexReport:  # fmt: skip
    """:func:`check_item` off the event loop (in a worker thread): awaiting it never stalls other tasks."""
    return await asyncio.to_thread(check_item, dict(strings), preamble=preamble, katex_macros=katex_macros,
                                   timeout_s=timeout_s)  # fmt: skip
