"""What a release holds: one row per item of every method, traced to its source papers, with its split.

A release item is an LMB question of the hard split, an EternalMath instance or a Proof2Hybrid
question. Each row says where the item came from (the papers, with each paper's arXiv id, the date
of its first version and its licence), whether it is public or private (a private item's answers are
never exported), and when it was retired, if it was. Rows are plain JSON, as written in the
manifest; :func:`item_rows` reads them from a method's build outputs.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from theorembench.sources.licences import licence_info

METHODS = ("lmb", "eternal", "hybrid")


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def built_items(method: str, files: Mapping[str, Path]) -> list[dict[str, Any]]:
    """The items one build wrote: LMB's hard split, EternalMath's instances, Proof2Hybrid's questions."""
    if method == "lmb":
        return list(_read_json(files["hard"]))
    if method == "eternal":
        return _read_jsonl(files["instances"])
    if method == "hybrid":
        return list(_read_json(files["questions"]))
    raise ValueError(f"unknown method {method!r}")


def item_id(method: str, item: Mapping[str, Any]) -> str:
    """An item's id within the release: the method and the item's own id."""
    own = item.get("id") or item.get("instance_id")
    return f"{method}/{own}"


def source_papers(method: str, item: Mapping[str, Any], known: Iterable[str]) -> list[str]:
    """The ids of the stored papers an item was made from (a Proof2Hybrid question may draw on several; a
    Stacks Project seed has none)."""
    if method == "lmb":
        return [str(item.get("paper_id") or item.get("source_id"))]
    if method == "eternal":
        return [str(item["paper_id"])] if item.get("paper_id") else []
    origins = {str(part.get("origin") or "") for part in item.get("items") or []}
    ids = sorted(known, key=len, reverse=True)  # the longest id that prefixes an origin
    found = {next((pid for pid in ids if o == pid or o.startswith(pid + ":")), None) for o in origins}
    return sorted(p for p in found if p)


def is_private(release_seed: str, rid: str, fraction: float) -> bool:
    """Whether an item is in the private split: a draw per item from the release's seed, stable across builds."""
    digest = hashlib.sha256(f"{release_seed}:{rid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def item_rows(built: Mapping[str, Mapping[str, Path]], papers: Mapping[str, Mapping[str, Any]], *,
              split_seed: str, private_fraction: float,
              retired: Mapping[str, str]) -> list[dict[str, Any]]:  # fmt: skip
    """One manifest row per item of every build (``built``: method -> its output files), with its papers'
    provenance (``papers``: the stored rows by id), its split and its retirement date."""
    rows = []
    for method in METHODS:
        if method not in built:
            continue
        for item in built_items(method, built[method]):
            rid = item_id(method, item)
            sources = [paper_provenance(pid, papers.get(pid)) for pid in source_papers(method, item, papers)]
            rows.append({"id": rid, "method": method, "papers": sources,
                         "first_version": max((s["first_version"] or "" for s in sources), default="") or None,
                         "split": "private" if is_private(split_seed, rid, private_fraction) else "public",
                         "retired": retired.get(rid)})  # fmt: skip
    return rows


def paper_provenance(paper_id: str, paper: Mapping[str, Any] | None) -> dict[str, Any]:
    """A paper as a release names it: its id, arXiv id, the date of its first version and its licence."""
    paper = paper or {}
    meta = paper.get("meta") or {}
    first = meta.get("created") or paper.get("published")
    return {"paper_id": paper_id, "arxiv_id": paper.get("arxiv_id"),
            "first_version": str(first)[:10] if first else None, "license": paper.get("license")}  # fmt: skip


def text_allowed(row: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """Whether every source paper's licence lets its text ship with the item, and the licences' short names (an
    item with no source paper, such as a Stacks Project seed's, carries none of a paper's text)."""
    infos = [licence_info(p.get("license")) for p in row.get("papers") or []]
    return all(i.redistributable for i in infos), sorted({i.name for i in infos})


def licence_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest's licence block: the items whose papers' text an export leaves out, and items per licence."""
    counts: Counter[str] = Counter()
    withheld = []
    for r in rows:
        allowed, names = text_allowed(r)
        if not allowed:
            withheld.append(r["id"])
        counts.update(names)
    return {"text_withheld": sorted(withheld), "items_per_licence": dict(sorted(counts.items()))}


def changes(rows: list[dict[str, Any]], previous: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """What changed against the previous release: items added, removed, newly retired, moved between splits."""
    if previous is None:
        return None
    before = {r["id"]: r for r in previous}
    now = {r["id"]: r for r in rows}
    return {"added": sorted(set(now) - set(before)), "removed": sorted(set(before) - set(now)),
            "retired": sorted(i for i in now if now[i]["retired"] and not (before.get(i) or {}).get("retired")),
            "split_changed": sorted(i for i in set(now) & set(before) if now[i]["split"] != before[i]["split"])}


__all__ = ["METHODS", "built_items", "changes", "is_private", "item_id", "item_rows", "licence_summary",
           "paper_provenance", "source_papers", "text_allowed"]  # fmt: skip
