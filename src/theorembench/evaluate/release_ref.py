"""Which release an item file belongs to: every score names the release it was computed on.

A release folder (``release build``) holds ``manifest.json`` with the release id and one row per
item; the items a method built lie in subfolders of it (``lmb/…``, ``eternal/…``, and in the released
layout ``lmb/data/<month>/hard/…``). :func:`release_of` walks up from an item file to the nearest such
manifest. A file outside any release belongs to none, and its scores say so (``release: null``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
MAX_DEPTH = 6  # the released LMB layout puts items five folders below the release


@dataclass(frozen=True)
class ReleaseRef:
    """A release as a score names it: its id, its content digest, its folder, and its manifest's item rows."""

    release: str
    content_digest: str | None
    folder: Path
    items: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"release": self.release, "content_digest": self.content_digest, "folder": str(self.folder)}

    def row(self, item_id: str) -> dict[str, Any] | None:
        """The manifest row of an item, given its release id (``lmb/<id>``) or its own id."""
        for r in self.items:
            if r["id"] == item_id or r["id"].split("/", 1)[-1] == item_id:
                return r
        return None


def release_of(path: str | Path) -> ReleaseRef | None:
    """The release whose folder holds ``path`` (the nearest ``manifest.json`` with a release id above it)."""
    folder = Path(path).resolve().parent
    for _ in range(MAX_DEPTH):
        candidate = folder / MANIFEST
        if candidate.is_file():
            try:
                doc = json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                doc = None
            if isinstance(doc, dict) and isinstance(doc.get("release"), str):
                return ReleaseRef(doc["release"], doc.get("content_digest"), folder, tuple(doc.get("items") or ()))
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


__all__ = ["MANIFEST", "ReleaseRef", "release_of"]
