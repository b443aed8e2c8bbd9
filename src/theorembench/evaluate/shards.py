"""Shards of one build or evaluation in the store, and the check a merge makes before it writes anything.

Each shard (``--shard i/N``, :mod:`theorembench.common.shard`) is a run of its own: its signature is the
unsharded run's with the shard appended, so a shard resumes on its own (``--resume``) and never meets
another shard's run; its model calls are ledgered under its run. The merge (``--merge-shards N``)
takes the latest run of each of the N shards of the same signature, and refuses with one line naming
the first shard that has no run or has not finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.shard import Shard
from theorembench.store import Row, Store, loads


def shard_signature(signature: str, shard: Shard) -> str:
    """The signature of one shard's run: the unsharded run's, and which shard of how many."""
    return f"{signature}#shard-{shard.index}-of-{shard.count}"


def finished_shards(store: Store, kind: str, signature: str, count: int, *, rerun: str = "") -> list[Row]:
    """The latest run of each of the ``count`` shards of ``signature``, every one finished; else a
    :class:`UserError` naming the first shard to run (``rerun``: what the shard's command adds to resume it)."""
    runs = []
    for index in range(count):
        shard = Shard(index, count)
        row = store.latest_run(kind, shard_signature(signature, shard))
        if row is None:
            raise UserError(f"shard {shard} has no run of these settings in this store: run the same theorembench "
                            f"command with --shard {shard} first, on this store")  # fmt: skip
        if row["status"] != "finished":
            raise UserError(f"shard {shard} has not finished (its run {row['id']} is {row['status']}): run the same "
                            f"theorembench command with --shard {shard}{rerun}")  # fmt: skip
        runs.append(row)
    return runs


def summed(runs: Sequence[Row], keys: Sequence[str]) -> dict[str, Any]:
    """The shards' own counts (calls made, cache hits, ...) added up from their runs' summaries."""
    totals: dict[str, Any] = dict.fromkeys(keys, 0)
    for row in runs:
        summary = loads(row["summary"]) or {}
        for key in keys:
            totals[key] += summary.get(key) or 0
    return totals


__all__ = ["finished_shards", "shard_signature", "summed"]
