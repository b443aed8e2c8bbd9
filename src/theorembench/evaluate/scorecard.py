"""One scorecard per evaluation run, the same for the four methods: what a leaderboard reads.

Each method writes its results in its own layout (the released LMB layout, EternalMath's results,
…). Beside it, every evaluation service writes ``scorecard-<results>.json`` with
:func:`write_scorecard`, in one shape:

- the method, the model, the run and the release the items came from (:mod:`release_ref`);
- the headline score as an :class:`~theorembench.common.stats.Estimate` (the method's own);
- one value per item (the mean over its samples; an unanswered sample counts 0), read from the
  run's Inspect log, which is what pairs two models item by item for rank ranges;
- a breakdown by the method's natural grouping (LMB's theorem category, EternalMath's tier, …);
- the cost the run's calls were priced at, in all and per item;
- the contamination guard's block and the isolation, where the results carry them;
- the results file and the Inspect log it came from, so every number can link to its source.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from theorembench.common.outputs import write_json
from theorembench.common.stats import Estimate, bounded_mean, proportion
from theorembench.evaluate.release_ref import release_of
from theorembench.evaluate.result import EvalResult
from theorembench.store import Store
from theorembench.store.schema import model_calls

SCHEMA = 1
PREFIX = "scorecard-"  # a prefix, not a suffix: globs such as results_*.json keep matching results only
METHOD_OF_KIND = {"eval.mcq": "lmb", "eval.hybrid": "hybrid", "eternal.eval": "eternal", "improof.eval": "improof"}
BREAKDOWN = {"lmb": "theorem_type", "eternal": "tier", "improof": "tier", "hybrid": "m"}  # sample metadata keys


def scorecard_path(results: Path) -> Path:
    return results.with_name(PREFIX + results.name)


def _value(sample: Any) -> float:
    """A logged sample's score in [0, 1]; an errored or unscored sample counts 0 (not correct)."""
    if sample.error is not None or not sample.scores:
        return 0.0
    value = next(iter(sample.scores.values())).value
    if value in ("C", True):
        return 1.0
    if value in ("I", False, "N", None):
        return 0.0
    try:
        return min(1.0, max(0.0, float(value)))
    except (TypeError, ValueError):
        return 0.0


def _group_label(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or None
    return str(value)


def per_item(log: Path, group_key: str | None) -> tuple[str, dict[str, float], dict[str, str]]:
    """The log's model, each item's mean value over its samples, and each item's group (when it has one)."""
    from inspect_ai.log import read_eval_log

    doc = read_eval_log(str(log))
    values: dict[str, list[float]] = defaultdict(list)
    groups: dict[str, str] = {}
    for sample in doc.samples or []:
        sid = str(sample.id)
        values[sid].append(_value(sample))
        label = _group_label((sample.metadata or {}).get(group_key)) if group_key else None
        if label is not None:
            groups[sid] = label
    return doc.eval.model, {k: sum(v) / len(v) for k, v in values.items()}, groups


def estimate_of(values: list[float]) -> Estimate:
    """Wilson for 0/1 values, the Wilson interval at the mean for graded ones (see common.stats)."""
    if all(v in (0.0, 1.0) for v in values):
        return proportion(int(sum(values)), len(values))
    return bounded_mean(values)


def variant_of(method: str, results: Mapping[str, Any]) -> str | None:
    """What sets two runs of one model on one method apart as entries of their own: IMProofBench's mode (agentic,
    single-turn) and LMB's evaluation with the proof sketch."""
    if method == "improof":
        return (results.get("settings") or {}).get("mode")
    if method == "lmb":
        return "with sketch" if (results.get("test_info") or {}).get("sketch") else None
    return None


def run_cost(store: Store, run_id: str | None) -> float | None:
    """What the run's own model calls were priced at (None when a call had no known price)."""
    if not run_id:
        return None
    rows = store.fetch(sa.select(model_calls.c.cost_usd).where(model_calls.c.run_id == run_id))
    costs = [r["cost_usd"] for r in rows]
    if any(c is None for c in costs):
        return None
    return float(sum(costs))


def build_scorecard(store: Store, result: EvalResult, *, items_file: Path | None = None,
                    model: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The scorecard of one run (see the module notes); ``items_file`` is what it was evaluated on."""
    method = METHOD_OF_KIND.get(result.kind, result.kind)
    group_key = BREAKDOWN.get(method)
    logged_model, items, groups = (per_item(result.log, group_key) if result.log and result.log.is_file()
                                   else (model or "", {}, {}))  # fmt: skip
    grouped: dict[str, list[float]] = defaultdict(list)
    for item, label in groups.items():
        grouped[label].append(items[item])
    logged_model = logged_model.removeprefix("theorembench/")  # Inspect's name for our provider (llm/inspect_provider)
    ref = release_of(items_file) if items_file else None
    # a merge of shards made no call of its own: its cost is what its shards' calls were priced at
    costs = [run_cost(store, run) for run in result.detail.get("cost_runs") or [result.run_id]]
    cost = None if any(c is None for c in costs) else float(sum(costs))  # type: ignore[arg-type]
    n = result.score.n if result.score else len(items)
    return {
        "scorecard": SCHEMA, "method": method, "kind": result.kind, "model": model or logged_model,
        "variant": variant_of(method, result.results),
        "run_id": result.run_id, "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "release": ref.to_dict() if ref else None, "items_file": str(items_file) if items_file else None,
        "score": result.score.to_dict() if result.score else None, "items": items,
        "breakdown": {"by": group_key, "groups": {k: estimate_of(v).to_dict() for k, v in sorted(grouped.items())}}
        if grouped else None,
        "cost_usd": cost, "cost_per_item": (cost / n) if cost is not None and n else None,
        "cutoff": result.detail.get("cutoff") or result.results.get("cutoff"),
        "isolation": result.results.get("isolation"),
        "results": str(result.path), "log": str(result.log) if result.log else None,
    }  # fmt: skip


def write_scorecard(store: Store, result: EvalResult, *, items_file: Path | None = None,
                    model: str | None = None) -> Path:  # fmt: skip
    """Write the run's scorecard beside its results file; returns its path (also in ``result.files``)."""
    path = scorecard_path(result.path)
    write_json(path, build_scorecard(store, result, items_file=items_file, model=model))
    result.files["scorecard"] = path
    return path


def read_scorecards(folders: list[Path]) -> list[dict[str, Any]]:
    """Every scorecard under the folders (recursively), oldest first; a file that is not one is left out."""
    found = []
    for folder in folders:
        paths = [folder] if folder.is_file() else sorted(folder.rglob(f"{PREFIX}*.json"))
        for path in paths:
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(doc, Mapping) and doc.get("scorecard") == SCHEMA:
                found.append({**doc, "_path": str(path)})
    return sorted(found, key=lambda d: (d.get("created") or "", d["_path"]))


__all__ = [
    "BREAKDOWN",
    "METHOD_OF_KIND",
    "PREFIX",
    "build_scorecard",
    "estimate_of",
    "per_item",
    "read_scorecards",
    "run_cost",
    "scorecard_path",
    "scored",
    "write_scorecard",
]


def scored(store: Store, result: EvalResult, *, items_file: Path | str | None = None) -> EvalResult:
    """``result`` after writing its scorecard (every evaluation service returns through this)."""
    write_scorecard(store, result, items_file=Path(items_file) if items_file else None)
    return result
