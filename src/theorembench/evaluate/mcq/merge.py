"""The merge of an MCQ evaluation's shards: the results of one run, from the N shards' runs in the store.

Every shard (``--shard i/N``) asked its own items in a run of its own. The merge asks nothing: it
checks that each of the N shards has a finished run of the same settings holding every item the shard
owns, copies their result rows into one run under the unsharded signature (so ``--resume`` and the
sketch gain find it as they find one run), and writes the results file, the Inspect log and the
scorecard through the writer one run uses (:func:`~theorembench.evaluate.mcq.runner.write_results`).
The calls, cache hits and cost are the shards' own, added up.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.shard import Shard
from theorembench.evaluate.cutoff import Selection
from theorembench.evaluate.mcq.items import Dataset
from theorembench.evaluate.mcq.runner import KIND, MCQConfig, evaluated_indices, run_config_of, write_results
from theorembench.evaluate.result import EvalResult
from theorembench.evaluate.shards import finished_shards, summed
from theorembench.llm import ModelSpec
from theorembench.store import Row, Store, loads

COUNTERS = ("calls_made", "cache_hits", "resumed_items", "cost_usd_this_invocation")


def merge_mcq(store: Store, dataset: Dataset, cfg: MCQConfig, spec: ModelSpec, count: int, *,
              selection: Selection | None = None) -> EvalResult:  # fmt: skip
    """The results of the evaluation ``cfg`` describes, from its ``count`` shards' runs (see the module notes)."""
    started_at, t0 = datetime.now(UTC), time.perf_counter()
    indices = evaluated_indices(dataset, cfg, selection)
    signature = cfg.signature(dataset.id, spec.endpoint)
    runs = finished_shards(store, KIND, signature, count, rerun=" --resume")
    rows: dict[int, list[Row]] = {}
    for index, run in enumerate(runs):
        shard = Shard(index, count)
        mine = [i for i in indices if shard.owns(dataset.items[i].id)]
        found = _rows_by_item(store, run["id"], dataset, set(mine))
        missing = [dataset.items[i].id for i in mine if i not in found]
        if missing:
            raise UserError(f"shard {shard} (run {run['id']}) has no result for {len(missing)} of its items, first "
                            f"{missing[0]} (did it run on fewer items?): run the same theorembench command with "
                            f"--resume and --shard {shard}")  # fmt: skip
        rows.update(found)
    config = run_config_of(cfg, dataset, spec) | {"shards": [run["id"] for run in runs]}
    run_id = store.create_run(KIND, signature, name=dataset.name, model=cfg.model, dataset_id=dataset.id,
                              config=config)  # fmt: skip
    for i in indices:
        for row in rows[i]:
            store.put_result(run_id, row["idx"], row["sample"], item_id=row["item_id"], status=row["status"],
                             record=loads(row["record"]), call_id=row["call_id"], answer=row["answer"],
                             correct_label=row["correct_label"], is_correct=_flag(row["is_correct"]),
                             error=row["error"])  # fmt: skip
    ordered = {i: loads(rows[i][0]["record"]) for i in indices}
    counters = summed(runs, COUNTERS) | {"shards": [run["id"] for run in runs]}
    counters["cost_usd_this_invocation"] = round(counters["cost_usd_this_invocation"], 6)
    return write_results(store, cfg, dataset, spec, indices, ordered, {}, counters, started_at=started_at, t0=t0,
                         run_id=run_id, selection=selection, cost_runs=[run["id"] for run in runs])  # fmt: skip


def _rows_by_item(store: Store, run_id: str, dataset: Dataset, wanted: set[int]) -> dict[int, list[Row]]:
    """The result rows of the wanted items in a shard's run, sample 0 (the item's record) first."""
    by_item: dict[int, list[Row]] = {}
    for row in store.results(run_id):
        if row["idx"] in wanted and dataset.items[row["idx"]].id == row["item_id"]:
            by_item.setdefault(row["idx"], []).append(row)
    ordered = {i: sorted(found, key=lambda r: r["sample"]) for i, found in by_item.items()}
    return {i: found for i, found in ordered.items() if found[0]["sample"] == 0}


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


__all__ = ["merge_mcq"]
