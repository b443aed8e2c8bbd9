"""Reading tables people edit by hand: a CSV with named columns or a JSON list of objects."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError


def read_rows(path: str | Path, columns: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    """``(where, row)`` pairs, ``where`` naming the line or item for error messages.

    ``.json``: a list of objects; anything else: a CSV whose header holds ``columns`` (a BOM is
    allowed, as spreadsheets write one). Unreadable or malformed files raise UserError with one line.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    names = " and ".join(columns)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UserError(f"{path}: not JSON ({exc})") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise UserError(f"{path}: expected a JSON list of objects with {names}")
        return [(f"{path}: item {i}", r) for i, r in enumerate(data, start=1)]
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or not set(columns) <= set(reader.fieldnames):
        raise UserError(f"{path}: a CSV with the columns {names} is needed")
    return [(f"{path}: line {reader.line_num}", dict(r)) for r in reader]
