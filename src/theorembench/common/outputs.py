"""The one writer of output files: JSON, JSON Lines and text, each written atomically.

Every file a command produces is written to a temporary file in the same folder and
renamed over the target, so a reader (or a process killed mid-write) sees either the
old file or the new one, never half of one. Folders are created as needed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path: str | Path, data: Any, *, indent: int | None = 1) -> Path:
    """``data`` as JSON (UTF-8, non-ASCII kept, values JSON cannot hold written as strings)."""
    return write_text(path, json.dumps(data, ensure_ascii=False, indent=indent, default=str) + "\n")


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> Path:
    """One JSON value per line."""
    return write_text(path, "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows))


__all__ = ["write_json", "write_jsonl", "write_text"]
