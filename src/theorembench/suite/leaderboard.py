"""``theorembench leaderboard``: models × methods × releases as a static site, from the runs' scorecards.

Every evaluation writes a scorecard beside its results (:mod:`theorembench.evaluate.scorecard`). The
leaderboard reads them, keeps the latest run of each model on each method and release, and writes
one folder that needs no server: ``index.html`` with its stylesheet, ``leaderboard.json`` (the same
numbers for programs), local copies of Vega, Vega-Lite and Vega-Embed for the charts (never a CDN),
and under ``files/`` a copy of every results file, scorecard and Inspect log a number links to.

Rank ranges: within one method and release, two models are told apart when the paired bootstrap
interval of their score difference over the items both answered excludes 0 (the approach MathArena
uses). A model's rank range runs from 1 + the number of models told apart above it to the number of
models less those told apart below it; overlapping ranges mean the data does not order those models.
"""

from __future__ import annotations

import hashlib
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_json
from theorembench.common.stats import Estimate, paired_difference
from theorembench.evaluate.scorecard import read_scorecards

METHOD_NAMES = {"lmb": "LiveMathematicianBench", "hybrid": "Proof2Hybrid", "eternal": "EternalMath",
                "improof": "IMProofBench"}  # fmt: skip
ASSETS = Path(__file__).resolve().parents[1] / "report" / "assets"


@dataclass
class Leaderboard:
    folder: Path
    entries: list[dict[str, Any]]
    index: Path


def _release_label(card: dict[str, Any]) -> str:
    rel = card.get("release") or {}
    if rel.get("release"):
        return rel["release"]
    return f"file {Path(card['items_file']).name}" if card.get("items_file") else "no release"


def _model_label(card: dict[str, Any]) -> str:
    return card["model"] + (f" ({card['variant']})" if card.get("variant") else "")


def latest_runs(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The latest scorecard of each model on each method and release (cards come oldest first)."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for card in cards:
        latest[(card["method"], _release_label(card), _model_label(card))] = card
    return list(latest.values())


def rank_ranges(cards: list[dict[str, Any]], *, seed: int = 0) -> dict[str, tuple[int, int]]:
    """Each model's rank range among ``cards`` (one method and release; see the module notes)."""
    better: dict[str, int] = defaultdict(int)
    worse: dict[str, int] = defaultdict(int)
    for i, a in enumerate(cards):
        for b in cards[i + 1:]:
            shared = sorted(set(a["items"]) & set(b["items"]))
            if not shared:
                continue
            diff = paired_difference([a["items"][k] for k in shared], [b["items"][k] for k in shared], seed=seed)
            if diff.low > 0:  # b is better than a
                better[a["model"]] += 1
                worse[b["model"]] += 1
            elif diff.high < 0:
                better[b["model"]] += 1
                worse[a["model"]] += 1
    n = len(cards)
    return {c["model"]: (1 + better[c["model"]], n - worse[c["model"]]) for c in cards}


def cutoff_status(card: dict[str, Any]) -> str:
    """How the contamination guard treated the run, in a few words."""
    block = card.get("cutoff")
    if not block:
        return "no guard recorded"
    guard = block.get("guard", "off")
    if guard == "off":
        return "guard off"
    cutoff = f"cutoff {block['cutoff']}" if block.get("cutoff") else "the model's cutoff is unknown"
    counted, excluded = len(block.get("counted") or []), len(block.get("excluded") or [])
    unknown = len(block.get("unknown") or [])
    text = f"{guard}: {cutoff}; {counted} counted, {excluded} excluded"
    return text + (f", {unknown} undated" if unknown else "")


def _copy_source(path: str | None, files: Path) -> str | None:
    """Copy a file a number links to under ``files/`` (named by a digest of its path); its site-relative link."""
    if not path or not Path(path).is_file():
        return None
    src = Path(path)
    folder = files / hashlib.sha256(str(src.resolve()).encode()).hexdigest()[:12]
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, folder / src.name)
    return f"files/{folder.name}/{src.name}"


def _entry(card: dict[str, Any], ranks: tuple[int, int], files: Path) -> dict[str, Any]:
    score = Estimate.from_dict(card.get("score"))
    return {
        "model": card["model"], "method": card["method"], "method_name": METHOD_NAMES.get(card["method"],
                                                                                           card["method"]),
        "release": _release_label(card), "score": card.get("score"),
        "score_text": score.percent(1) if score else "n=0", "n": score.n if score else 0,
        "errors": score.errors if score else 0, "cost_per_item": card.get("cost_per_item"),
        "cost_usd": card.get("cost_usd"), "cutoff": cutoff_status(card), "cutoff_block": card.get("cutoff"), "rank": list(ranks),
        "breakdown": card.get("breakdown"), "run_id": card.get("run_id"), "created": card.get("created"),
        "isolation": card.get("isolation"),
        "links": {"results": _copy_source(card.get("results"), files), "log": _copy_source(card.get("log"), files),
                  "scorecard": _copy_source(card.get("_path"), files)},
    }  # fmt: skip


def build_leaderboard(sources: list[Path], out: Path, *, title: str = "theorembench leaderboard") -> Leaderboard:
    """Build the static site in ``out`` from the scorecards found under ``sources``."""
    from theorembench.suite.leaderboard_page import render_page

    # a model's variant (IMProofBench's mode, LMB with the sketch) is an entry of its own
    cards = [{**c, "model": _model_label(c), "variant": None} for c in latest_runs(read_scorecards(sources))]
    if not cards:
        where = ", ".join(str(s) for s in sources)
        raise UserError(f"no scorecard under {where}: run an evaluation first (each writes scorecard-<results>.json)")
    if out.exists():
        shutil.rmtree(out / "files", ignore_errors=True)
    files = out / "files"
    files.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for card in cards:
        groups[(card["method"], _release_label(card))].append(card)
    entries = []
    for key in sorted(groups):
        group = groups[key]
        ranks = rank_ranges(group)
        entries += sorted((_entry(c, ranks[c["model"]], files) for c in group),
                          key=lambda e: (e["rank"][0], -((e["score"] or {}).get("value") or 0.0), e["model"]))
    vega = out / "vega"
    vega.mkdir(exist_ok=True)
    for asset in (ASSETS / "vega").iterdir():
        shutil.copy2(asset, vega / asset.name)
    shutil.copy2(ASSETS / "leaderboard.css", out / "leaderboard.css")
    write_json(out / "leaderboard.json", {"title": title, "entries": entries})
    index = out / "index.html"
    index.write_text(render_page(title, entries), encoding="utf-8")
    return Leaderboard(out, entries, index)


__all__ = ["Leaderboard", "build_leaderboard", "cutoff_status", "latest_runs", "rank_ranges"]
