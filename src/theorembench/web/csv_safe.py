"""CSV files that spreadsheets open without running anything: cells that could start a formula are defused.

A cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return may be read as a
formula (or, after the spreadsheet strips the whitespace, as one) by Excel, LibreOffice or Google
Sheets. Such a cell gets a leading ``'``, which spreadsheets show as text. Every other cell is
written unchanged; quoting is the ``csv`` module's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> str:
    """The cell's text (empty for None), with a leading ``'`` when it starts like a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A whole CSV document (header first, CRLF line ends) with every cell made safe."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([safe_cell(h) for h in header])
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
    return out.getvalue()
