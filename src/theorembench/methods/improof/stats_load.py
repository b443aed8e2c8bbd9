"""``improof stats``: read answers, verdicts and grades from the store into plain rows, compute, write the report.

Rows are built through the data model's own functions (``answers.list_answers``; ``autograde.effective_verdicts``,
which applies verdict overrides and carries each subquestion's points from the answered problem version;
``grades.list_grades``), so the statistics see exactly what the platform shows. An answer counts in the scores only
once every subquestion has a verdict of the current grader version (or an override). A model evaluated in
single-turn mode is reported as its own entry, ``<model> (single-turn)``.

Grades are the blind ones: a grade changed after its grader saw which model wrote the answer is a correction
(``grades.correct_grade``), left out of every figure; the document counts them apart, under ``grade_corrections``,
with the rule in words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.methods.improof import answers as answers_mod
from theorembench.methods.improof import autograde
from theorembench.methods.improof import grades as grades_mod
from theorembench.methods.improof.problems import OPEN_PROBLEM
from theorembench.methods.improof.results import run_isolation
from theorembench.methods.improof.stats_report import compute, write_outputs
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a dict or of an object (pydantic model, dataclass)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def model_label(model: str, mode: str | None) -> str:
    return f"{model} (single-turn)" if mode == "single-turn" else model


def _tags(store: Store, problem_id: str, version: int) -> list[str]:
    found = ImproofRepo(store).version(problem_id, int(version))
    tags = (found["payload"] if found else {}).get("tags") or []
    return [str(t) for t in tags]


def answer_row(store: Store, answer: Mapping[str, Any]) -> dict[str, Any]:
    """One answer as a stats row: its weighted score from the effective verdicts (None until every one is graded),
    and the tags of the answered problem version (``open``: tagged as an open problem)."""
    found = autograde.effective_verdicts(store, answer["id"])
    tags = _tags(store, answer["problem_id"], answer["version"])
    score = all_correct = None
    if found and all(v["source"] != "ungraded" for v in found):
        correct = [v["correct"] for v in found]
        score = float(autograde.weighted_score([float(v["points"]) for v in found], correct))
        all_correct = all(c is True for c in correct)
    return {"answer_id": answer["id"], "run_id": answer.get("run_id"), "problem_id": answer["problem_id"],
            "version": answer["version"], "model": model_label(answer["model"], answer.get("mode")),
            "epoch": answer.get("epoch"), "score": score, "all_correct": all_correct,
            "subquestions": len(found), "stages": answer.get("stages") or [], "tags": tags,
            "open": OPEN_PROBLEM in tags}  # fmt: skip


def separate_non_repeats(store: Store, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep apart what is not a repeat of the same thing, so that σ(M) and the scores never pool it.

    Repeats are answers of one run (one endpoint, one set of settings and mode: the run id is their digest) on
    one version of a question. A model label with answers from several runs (other token budgets, say) becomes
    one entry per run, ``<model> [run <id>]``; a question answered in several versions (an edited problem
    re-imported) becomes one question per version, ``<id> (v<n>)``, in every figure.
    """
    runs: dict[str, set[str]] = {}
    versions: dict[str, set[int]] = {}
    for r in rows:
        runs.setdefault(r["model"], set()).add(str(r.get("run_id")))
        versions.setdefault(r["problem_id"], set()).add(int(r["version"]))
    for r in rows:
        if len(runs[r["model"]]) > 1:
            r["model"] = f"{r['model']} [run {r.get('run_id')}]"
        r["question"] = f"{r['problem_id']} (v{r['version']})" if len(versions[r["problem_id"]]) > 1 \
            else r["problem_id"]  # fmt: skip
    return rows


def grade_row(grade: Any, answer: Mapping[str, Any]) -> dict[str, Any]:
    indicators = _get(grade, "indicators") or {}
    if not isinstance(indicators, Mapping):
        indicators = dict(indicators)
    marks = {k: (None if v is None else str(getattr(v, "value", v))) for k, v in indicators.items()}
    return {"answer_id": answer["answer_id"], "problem_id": answer["problem_id"],
            "question": answer.get("question", answer["problem_id"]), "model": answer["model"],
            "grader": str(_get(grade, "grader")), "progress": _get(grade, "progress"), "indicators": marks,
            "status": str(getattr(_get(grade, "status"), "value", _get(grade, "status")))}  # fmt: skip


def load_rows(store: Store, run_ids: Sequence[str] | None = None,
              models: Sequence[str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """Answer rows and grade rows of the selected runs and models; UserError when a run or model has no answers."""
    seen: dict[str, Mapping[str, Any]] = {}
    for run in run_ids or [None]:
        got = answers_mod.list_answers(store, run_id=run)
        if run is not None and not got:
            raise UserError(f"no IMProofBench answers for run {run!r}: see `theorembench improof eval`")
        seen.update((a["id"], a) for a in got)
    found = list(seen.values())
    if models:
        known = sorted({a["model"] for a in found})
        missing = [m for m in models if m not in known]
        if missing:
            raise UserError(f"no answers by {', '.join(missing)} in the selection; models with answers: "
                            f"{', '.join(known) or 'none'}")  # fmt: skip
        found = [a for a in found if a["model"] in models]
    if not found:
        raise UserError("no IMProofBench answers in the store: run `theorembench improof eval` first")
    rows = separate_non_repeats(store, [answer_row(store, a) for a in found])
    by_id = {r["answer_id"]: r for r in rows}
    grades = [grade_row(g, by_id[_get(g, "answer_id")]) for g in grades_mod.list_grades(store)
              if _get(g, "answer_id") in by_id]  # fmt: skip
    return rows, grades


CORRECTIONS_RULE = ("Grades changed after their grader saw the model names are corrections: every figure uses the "
                    "grade saved before the reveal and leaves the corrections out.")


def corrections_summary(store: Store, answer_ids: set[str]) -> dict[str, Any]:
    """How many grades of the selected answers were corrected after the reveal (left out of the figures)."""
    found = [c for c in grades_mod.list_corrections(store) if c.answer_id in answer_ids]
    return {"grades": len({(c.answer_id, c.grader) for c in found}), "revisions": len(found), "rule": CORRECTIONS_RULE}


@dataclass
class StatsResult:
    doc: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)


def improof_stats(store: Store, *, run_ids: Sequence[str] | None = None, models: Sequence[str] | None = None,
                  out_dir: str | Path | None = None) -> StatsResult:  # fmt: skip
    """Statistics of the selected runs and models; with ``out_dir``, stats.json, report.md and SVG charts there."""
    answers, grades = load_rows(store, run_ids, models)
    runs = sorted({a["run_id"] for a in answers if a.get("run_id")})
    doc = compute(answers, grades, selection={"runs": list(run_ids or []), "models": list(models or [])},
                  isolation={run: run_isolation(store, run) for run in runs})  # fmt: skip
    doc["grade_corrections"] = corrections_summary(store, {a["answer_id"] for a in answers})
    paths = write_outputs(doc, out_dir) if out_dir is not None else {}
    return StatsResult(doc, paths)


__all__ = ["CORRECTIONS_RULE", "StatsResult", "answer_row", "corrections_summary", "grade_row", "improof_stats",
           "load_rows", "model_label", "separate_non_repeats"]
