"""``release export``: a release as files others load, keeping its splits and its papers' licences.

Formats (any of them in one export):

- ``hf``: a Hugging Face dataset folder. One Parquet file per method, month and split under
  ``<method>/<month>/``, and ``README.md``, the dataset card: YAML metadata with the licence, one
  config per method and month with its ``public`` and ``private`` splits and its features, then
  what the columns mean and which items ship without their paper's text. It loads with
  ``datasets.load_dataset(folder, "<method>-<month>")`` or ``load_dataset("parquet", data_files=…)``.
- ``json``: LMB's public items as the released JSON (``qaEval_<YYYYMM>_ge5_hard.json``), and a
  JSON list per method and split for the others.
- ``jsonl``: one JSON line per item, every method, per split.

What leaves the release follows :mod:`release_views`: a private item's answers never do (its keys go
to ``private_keys.jsonl`` in the release folder, never into the export), and a paper's own text only
where its licence allows. ``export.json`` says what was written and which items were affected.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting
from theorembench.common.outputs import write_json, write_jsonl
from theorembench.suite.release import read_manifest
from theorembench.suite.release_items import built_items, item_id, text_allowed
from theorembench.suite.release_views import flat_fields, item_view

FORMATS = ("hf", "json", "jsonl")
KEY_FILE = ".private_key"
KEYS = "private_keys.jsonl"


@dataclass
class ExportResult:
    out: Path
    summary: dict[str, Any]
    files: list[Path]


def _secret(folder: Path) -> bytes:
    """The release's private key (made once, kept in the release folder, never exported)."""
    path = folder / KEY_FILE
    if not path.is_file():
        path.write_text(secrets.token_hex(32), encoding="utf-8")
        path.chmod(0o600)
    return bytes.fromhex(path.read_text(encoding="utf-8").strip())


def exported_rows(folder: Path, manifest: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every item of the release as exported (with its typed columns) and the private items' keys."""
    secret = _secret(folder)
    rows_by_id = {r["id"]: r for r in manifest["items"]}
    out, keys = [], []
    for method, block in manifest["methods"].items():
        files = {k: folder / v for k, v in block["files"].items()}
        for item in built_items(method, files):
            rid = item_id(method, item)
            row = rows_by_id.get(rid)
            if row is None:
                continue
            private = row["split"] == "private"
            with_text, licences = text_allowed(row)
            view, key = item_view(method, item, private=private, with_text=with_text, secret=secret)
            if key:
                keys.append({**key, "id": rid})
            question, options, answer = flat_fields(method, view)
            out.append({
                "id": rid, "method": method, "month": manifest["month"], "release": manifest["release"],
                "split": row["split"], "retired": row.get("retired"),
                "paper_ids": [p["paper_id"] for p in row["papers"]],
                "arxiv_ids": [p["arxiv_id"] for p in row["papers"] if p.get("arxiv_id")],
                "first_version": row.get("first_version"), "licenses": licences, "text_included": with_text,
                "answer_included": not private, "question": question, "options": options,
                "answer": None if private else answer, "item": view,
            })  # fmt: skip
    return out, keys


def _arrow_table(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    from theorembench.suite.release_card import ARROW_SCHEMA

    columns = {f.name: [r[f.name] if f.name != "item" else json.dumps(r["item"], ensure_ascii=False)
                        for r in rows] for f in ARROW_SCHEMA}  # fmt: skip
    columns["first_version"] = [_date(v) for v in columns["first_version"]]
    return pa.table(columns, schema=ARROW_SCHEMA)


def _date(value: str | None) -> Any:
    from datetime import date

    return date.fromisoformat(value[:10]) if value else None


def export_release(folder: Path, out: Path, *, formats: tuple[str, ...] = ("hf",)) -> ExportResult:
    """Export the release in ``folder`` to ``out`` in the given formats (see the module notes)."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise InvalidSetting("format", f"must be one of {', '.join(FORMATS)}, got {', '.join(unknown) or 'none'}")
    manifest = read_manifest(folder)
    rows, keys = exported_rows(folder, manifest)
    write_jsonl(folder / KEYS, keys)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: {"public": [], "private": []})
    for r in rows:
        groups[(r["method"], r["month"])][r["split"]].append(r)
    if "hf" in formats:
        import pyarrow.parquet as pq

        from theorembench.suite.release_card import dataset_card

        for (method, month), splits in sorted(groups.items()):
            for split, mine in splits.items():
                if not mine:
                    continue  # `datasets` cannot read a Parquet file of no rows: an empty split is left out
                path = out / method / month / f"{split}.parquet"
                path.parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(_arrow_table(mine), path)
                written.append(path)
        card = out / "README.md"
        card.write_text(dataset_card(manifest, rows, {g: [s for s, r in v.items() if r] for g, v in sorted(groups.items())}),
                        encoding="utf-8")
        written.append(card)
    if "json" in formats:
        for (method, month), splits in sorted(groups.items()):
            for split, mine in splits.items():
                if method == "lmb" and split == "public":
                    name = f"qaEval_{month.replace('-', '')}_ge5_hard.json"  # the released file's name
                else:
                    name = f"{method}-{month}-{split}.json"
                path = out / "json" / name
                write_json(path, [r["item"] for r in mine])
                written.append(path)
    if "jsonl" in formats:
        for split in ("public", "private"):
            path = out / "jsonl" / f"{split}.jsonl"
            write_jsonl(path, [r for r in rows if r["split"] == split])
            written.append(path)
    summary = {
        "release": manifest["release"], "month": manifest["month"], "formats": list(formats),
        "items": len(rows), "public": sum(r["split"] == "public" for r in rows),
        "private": sum(r["split"] == "private" for r in rows),
        "text_withheld": sorted(r["id"] for r in rows if not r["text_included"]),
        "licenses": dict(sorted(Counter(name for r in rows for name in r["licenses"]).items())),
        "files": [str(p.relative_to(out)) for p in written],
    }  # fmt: skip
    write_json(out / "export.json", summary)
    return ExportResult(out, summary, written)


__all__ = ["FORMATS", "ExportResult", "export_release", "exported_rows"]
