"""The exported release's dataset card (``README.md`` with Hugging Face's YAML header) and its column types."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pyarrow as pa
import yaml

ARROW_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("method", pa.string(), nullable=False),
    pa.field("month", pa.string(), nullable=False),
    pa.field("release", pa.string(), nullable=False),
    pa.field("split", pa.string(), nullable=False),
    pa.field("retired", pa.string()),
    pa.field("paper_ids", pa.list_(pa.string())),
    pa.field("arxiv_ids", pa.list_(pa.string())),
    pa.field("first_version", pa.date32()),
    pa.field("licenses", pa.list_(pa.string())),
    pa.field("text_included", pa.bool_(), nullable=False),
    pa.field("answer_included", pa.bool_(), nullable=False),
    pa.field("question", pa.string()),
    pa.field("options", pa.list_(pa.string())),
    pa.field("answer", pa.string()),
    pa.field("item", pa.string()),
])  # fmt: skip

COLUMNS = {
    "id": "the item's id in the release: `<method>/<its own id>`",
    "method": "lmb (LiveMathematicianBench), eternal (EternalMath) or hybrid (Proof2Hybrid)",
    "month": "the month whose papers the release was built from",
    "release": "the release id, e.g. theorembench-2026-11-r1",
    "split": "public, or private (the answers are not exported)",
    "retired": "the date from which the item no longer counts in scores, if retired",
    "paper_ids": "the source papers, as the store names them",
    "arxiv_ids": "the source papers' arXiv ids",
    "first_version": "the date of the latest first version among the source papers (for cutoff checks)",
    "licenses": "the source papers' licences",
    "text_included": "whether the paper's own text ships (only where every source paper's licence allows it)",
    "answer_included": "whether the answer ships (public items)",
    "question": "the question's stem (LMB), problem (EternalMath) or instruction (Proof2Hybrid)",
    "options": "LMB's options (A first, the keyed answer, in public items; shuffled in private ones) or "
               "Proof2Hybrid's statements",
    "answer": "the keyed answer: an option label, a value, or the indices of the correct statements",
    "item": "the whole exported item as JSON, in the method's own format",
}  # fmt: skip


def _feature(field: pa.Field) -> dict[str, Any]:
    kinds = {pa.string(): "string", pa.bool_(): "bool", pa.date32(): "date32"}
    if pa.types.is_list(field.type):
        return {"name": field.name, "list": kinds[field.type.value_type]}
    return {"name": field.name, "dtype": kinds[field.type]}


def hub_licence(names: list[str]) -> str:
    """The Hub's licence id for a set of licence names ("CC BY 4.0" -> cc-by-4.0); several or none: other."""
    found = sorted(set(names))
    if len(found) == 1 and re.fullmatch(r"CC(0| BY(-[A-Z]+)*) \d\.\d", found[0]):
        return found[0].lower().replace(" ", "-")
    return "other"


def config_name(method: str, month: str) -> str:
    return f"{method}-{month}"


def dataset_card(manifest: dict[str, Any], rows: list[dict[str, Any]],
                 groups: dict[tuple[str, str], list[str]]) -> str:  # fmt: skip
    """README.md: the YAML header (licence, configs with their splits and features), then the card's text;
    ``groups`` names each (method, month) config's splits that hold items."""
    licence_names = [n for r in rows for n in r["licenses"]]  # every source paper's, quoted or not
    features = [_feature(f) for f in ARROW_SCHEMA]
    header = {
        "license": hub_licence(licence_names),
        "pretty_name": manifest["release"],
        "tags": ["mathematics", "benchmark", "theorembench"],
        "configs": [{"config_name": config_name(m, month),
                     "data_files": [{"split": s, "path": f"{m}/{month}/{s}.parquet"} for s in splits]}
                    for (m, month), splits in groups.items()],
        "dataset_info": [{"config_name": config_name(m, month), "features": features} for m, month in groups],
    }  # fmt: skip
    if header["license"] == "other":
        header["license_name"] = "per-item"
        header["license_details"] = "Each item carries its source papers' licences in the `licenses` column."
    counts = Counter((r["method"], r["split"]) for r in rows)
    withheld = sorted(r["id"] for r in rows if not r["text_included"])
    lines = [
        "---", yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
        f"# {manifest['release']}", "",
        (f"Items built by theorembench {manifest['code']['version']} (code {manifest['code']['code_digest']}) from "
         f"papers first posted in {manifest['month']}; released {manifest['date']}."), "",
        "| method | public | private |", "|---|---|---|",
        *[f"| {m} | {counts[(m, 'public')]} | {counts[(m, 'private')]} |" for m in sorted({m for m, _ in groups})],
        "", "## Columns", "", *[f"- `{k}`: {v}" for k, v in COLUMNS.items()], "",
        "## Licences", "",
        ("A paper's own text (theorem, context, proof sketch, quoted statements) is included only where every "
         "source paper's licence allows redistribution. Other items ship without it and point to their papers "
         f"by id: {len(withheld)} item(s) here."), "",
        *([f"- `{i}`" for i in withheld] or ["(none)"]), "",
        "## Private split", "",
        "Private items ship without their answers; the answer keys stay with the release's maintainers.", "",
    ]  # fmt: skip
    return "\n".join(lines)


__all__ = ["ARROW_SCHEMA", "COLUMNS", "config_name", "dataset_card", "hub_licence"]
