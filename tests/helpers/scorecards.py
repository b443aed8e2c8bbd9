"""Scorecards as an evaluation writes them (evaluate/scorecard.py), for the leaderboard's tests."""

from __future__ import annotations

import json
from pathlib import Path


def write_card(folder: Path, model: str, values: list[float], *, method: str = "lmb", release: str | None = "theorembench-2026-11-r1",
          created: str = "2026-11-30T10:00:00+00:00", cutoff: dict | None = None) -> Path:  # fmt: skip
    """A scorecard as an evaluation writes it, with the results and log files it links to."""
    stem = f"{method}-{model.replace('/', '_')}-{created[:10]}"
    results = folder / f"{stem}.json"
    results.write_text(json.dumps({"model": model}))
    log = folder / f"{stem}.eval"
    log.write_bytes(b"PK-not-read-by-the-leaderboard")
    k, n = int(sum(values)), len(values)
    card = {"scorecard": 1, "method": method, "kind": "eval.mcq", "model": model, "run_id": f"run-{stem}",
            "created": created, "release": {"release": release} if release else None, "items_file": "items.json",
            "score": {"value": k / n, "ci95": [max(0.0, k / n - 0.2), min(1.0, k / n + 0.2)], "n": n, "errors": 1,
                      "method": "wilson"},
            "items": {f"q{i}": v for i, v in enumerate(values)},
            "breakdown": {"by": "theorem_type", "groups": {"Existence": {"value": 0.5, "ci95": [0.1, 0.9], "n": 4,
                                                                        "errors": 0, "method": "wilson"}}},
            "cost_usd": 0.3, "cost_per_item": 0.01, "cutoff": cutoff, "isolation": None, "results": str(results),
            "log": str(log)}  # fmt: skip
    path = folder / f"scorecard-{stem}.json"
    path.write_text(json.dumps(card))
    return path
