"""``evaluate_eternal``: score a model on (calibrated) instances by final answers, with tiers, MSC, taxonomy, report.

Each of the n samples per instance is a step of ``eternal.eval/<settings digest>``. Every
sample counts in n (:mod:`scoring`): one whose model call was refused for good (a 400) is
final and counts as not correct under ``errors``; one whose call failed transiently (429,
5xx, a timeout) counts as not correct in this run's figures, under ``pending``, and is
asked again by the next run. Scoring goes through the answer checker only; an answer the
checker cannot read counts as wrong. With ``judge``, every wrong answer gets error-category labels
(``taxonomy``); a person's stored overrides are applied. Writes ``results_<model>.json``,
an Inspect log, and ``report.md`` with its charts over every model evaluated into the
same folder on the same instances file.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.outputs import write_json
from theorembench.common.progress import OnCount
from theorembench.common.shard import Shard, shard_settings
from theorembench.common.stats import Estimate
from theorembench.evaluate.answers import CHECKER_VERSION
from theorembench.evaluate.cutoff import CutoffGuard, Selection, check_guard, cutoff_guard, select
from theorembench.evaluate.inspect_log import default_log_dir, write_inspect_log
from theorembench.evaluate.item_dates import item_date
from theorembench.evaluate.release_ref import release_of
from theorembench.evaluate.result import EvalResult
from theorembench.evaluate.samples import Sample, Scored, log_samples, run_samples
from theorembench.evaluate.scorecard import scored
from theorembench.evaluate.shards import finished_shards, shard_signature, summed
from theorembench.llm import LLM, GenerateSettings
from theorembench.llm.local import stop_private_servers
from theorembench.methods.eternal.answering import (
    AnswerTask,
    SharedChecker,
    answer_messages,
    answer_pipeline,
    answer_settings,
    expected_of,
    load_instances,
    progress_counter,
    resolve_models,
    response_text,
    settings_digest,
)
from theorembench.methods.eternal.originality import measure_instances
from theorembench.methods.eternal.radar import level_of
from theorembench.methods.eternal.report import instances_isolation, load_results, safe_name, write_report
from theorembench.methods.eternal.scoring import item_score, summarize
from theorembench.methods.eternal.taxonomy import apply_overrides, counts, import_overrides, label_failures, response_id
from theorembench.pipeline.steps import StepRunner
from theorembench.store import Store

KIND = "eternal.eval"


def evaluate_eternal(store: Store, path: str | Path, model: str, *, n: int = 1, judge: str | None = None,
                     out_dir: str | Path = Path("eternal_eval"), max_tokens: int | None = None,
                     temperature: float | None = None, seed: int | None = None, max_retries: int = 3,
                     max_connections: int | None = None, log_dir: Path | None = None, write_log: bool = True,
                     use_cache: bool = True, corpora: list[str] | None = None, reasoning_effort: str | None = None,
                     thinking_budget: int | None = None, timeout: float | None = None,
                     progress: OnCount | None = None, cutoff_guard_mode: str | None = None,
                     models_file: Path | None = None, shard: str | Shard | None = None,
                     merge_shards: int | None = None) -> EvalResult:  # fmt: skip
    """Ask ``model`` n times per instance, score per tier and MSC class with 95% intervals, label failures.

    ``progress(done, total)`` is called after every sample. Resumable: finished samples and
    judge labels come from the store; failed ones are asked again. Each item records its academic
    level and its measured originality (against ``corpora`` and the other templates' instances), which
    the radar's D4 and D6 read. ``cutoff_guard_mode`` (exclude, flag, off; None: exclude for a release's
    instances, else flag) is the contamination guard (:mod:`theorembench.evaluate.cutoff`), by the first version
    of each instance's source paper; the results' ``cutoff`` says which instances counted.

    ``shard="i/N"`` asks only the instances shard i of N owns (by a hash of the instance id), in a run of its
    own, and writes no file; ``merge_shards=N``, once the N shards have finished on this store, is the run over
    every instance: it finds their samples and labels stored, and adds up their calls.
    """
    if n < 1:
        raise InvalidSetting("n", "must be at least 1")
    shard, merge = shard_settings(shard, merge_shards)
    check_guard(cutoff_guard_mode)
    missing = [c for c in corpora or [] if not Path(c).is_file()]
    if missing:
        raise InvalidSetting("corpora", f"{missing[0]}: no such file")
    settings = answer_settings(max_tokens=max_tokens, temperature=temperature, seed=seed, max_retries=max_retries,
                               max_connections=max_connections, reasoning_effort=reasoning_effort,
                               thinking_budget=thinking_budget, timeout=timeout)  # fmt: skip
    instances = load_instances(path)
    llm = LLM(store, use_cache=use_cache)
    [variant] = resolve_models(llm, [model], "model", settings)
    spec, label, settings = variant.spec, variant.label, variant.settings
    guard = cutoff_guard(cutoff_guard_mode, spec.name, models_file=models_file, release=release_of(path) is not None)
    selection = _selection(store, Path(path), guard, instances)
    instances = [inst for inst in instances if selection.keeps(str(inst["instance_id"]))]
    if shard is not None:
        instances = shard.select(instances, key=lambda inst: str(inst["instance_id"]))
    judge_spec = llm.resolve(judge) if judge else None
    file_digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    pipeline = answer_pipeline("eternal.eval", settings)
    runner = StepRunner(store, pipeline)
    signature = settings_digest(file_digest, label, spec.endpoint, n, settings.cache_fields())
    shard_runs = [row["id"] for row in finished_shards(store, KIND, signature, merge, rerun="")] if merge else []
    run_id = store.create_run(KIND, shard_signature(signature, shard) if shard else signature, name=str(path),
                              model=label, config={"file": str(path), "n": n, "judge": judge,
                                                   "shard": shard.label if shard else None, "shards": shard_runs})  # fmt: skip
    llm.run_id = run_id
    started, t0 = datetime.now(UTC), time.perf_counter()
    outcomes: dict[tuple[int, int], Scored] = {}
    note = progress_counter(progress, len(instances) * n)

    async def go() -> list[dict[str, Any]]:
        checker = SharedChecker()
        try:
            task = AnswerTask(runner, llm, spec, instances, settings, checker, purpose=KIND, label=label)
            samples = [Sample(i, inst["instance_id"], s) for i, inst in enumerate(instances) for s in range(n)]
            scored = await run_samples(runner, task, samples, progress=note)
            outcomes.update({(sc.sample.index, sc.sample.epoch): sc for sc in scored})
            failures = _failures(llm, label, instances, outcomes, n)
            if judge_spec is None:
                return [{**f, "labels": [], "source": None, "rationale": "", "status": "unlabelled"}
                        for f in failures]  # fmt: skip
            judge_settings = GenerateSettings(max_retries=max_retries, max_connections=max_connections, timeout=timeout)
            return await label_failures(store, llm, judge_spec, failures, judge_settings)
        finally:
            checker.close()
            await llm.aclose()

    calls_before, hits_before = llm.calls_made, llm.cache_hits
    try:
        labels = asyncio.run(go())
    except BaseException:
        store.set_run_status(run_id, "interrupted")
        raise
    finally:
        stop_private_servers()
    items = _items(instances, outcomes, n, measure_instances(instances, list(corpora or [])))
    for i, item in enumerate(items):
        for s in item["samples"]:
            store.put_result(run_id, i, s["sample"], item_id=item["instance_id"], status=s["status"], record=s,
                             call_id=s.get("call_id"), answer=s.get("extracted"), correct_label=item["expected"],
                             is_correct=s.get("correct"), error=s.get("error"))  # fmt: skip
    summary = summarize(items, n)
    call_ids = [s["call_id"] for item in items for s in item["samples"] if s.get("call_id") is not None]
    # a merge's own calls (none, unless a shard left a sample pending) and its shards', added up
    shards_made = summed([store.get_run(r) for r in shard_runs], ("calls_made", "cache_hits"))
    summary.update(calls_made=llm.calls_made - calls_before + shards_made["calls_made"],
                   cache_hits=llm.cache_hits - hits_before + shards_made["cache_hits"],
                   wall_seconds=round(time.perf_counter() - t0, 3),
                   cost_usd=store.usage_of_calls(call_ids)["cost_usd"])  # fmt: skip
    if shard is not None:  # the shard's samples are in the store: the merge writes the results of every shard
        store.set_run_status(run_id, "finished", summary | {"shard": shard.label})
        return EvalResult(KIND, run_id, {"summary": summary}, Path(out_dir) / f"results_{safe_name(label)}.json",
                          None, Estimate.from_dict(summary["score"]), calls_made=summary["calls_made"],
                          cache_hits=summary["cache_hits"], incomplete=summary["pending"],
                          detail={"shard": shard.label})  # fmt: skip
    doc: dict[str, Any] = {
        "kind": KIND, "model": label, "endpoint": spec.endpoint, "file": str(path), "file_sha256": file_digest,
        "samples_per_item": n, "settings": settings.model_dump(exclude_none=True), "judge": judge, "run_id": run_id,
        "pipeline": pipeline, "date": started.strftime("%Y-%m-%d"),
        "scoring": "final answers only, through the answer checker; an unreadable answer and a sample whose "
                   "model call failed count as wrong",
        "summary": summary, "items": items, "isolation": instances_isolation(instances),
        "checker_version": CHECKER_VERSION, "originality_corpora": list(corpora or []),
    }  # fmt: skip
    doc["taxonomy"] = taxonomy_section(store, labels, judge)
    doc["cutoff"] = selection.block({str(item["instance_id"]): item["score"] for item in items}, binary=n <= 1,
                                    errors=[str(item["instance_id"]) for item in items
                                            if any(s["status"] != "ok" for s in item["samples"])])  # fmt: skip
    out_dir = Path(out_dir)
    log_path = _log(doc, instances, outcomes, llm, started, log_dir) if write_log else None
    doc["log"] = str(log_path) if log_path else None
    result_path = write_json(out_dir / f"results_{safe_name(label)}.json", doc)
    store.set_run_status(run_id, "finished", summary)
    return scored(store, EvalResult(KIND, run_id, doc, result_path, log_path, Estimate.from_dict(summary["score"]),
                      files={"report": folder_report(out_dir, file_digest)}, calls_made=summary["calls_made"],
                      cache_hits=summary["cache_hits"], incomplete=summary["pending"],
                      detail={"cutoff": doc["cutoff"], "cost_runs": [run_id, *shard_runs] if shard_runs else None}),
                  items_file=path)  # fmt: skip


def _selection(store: Store, path: Path, guard: CutoffGuard, instances: list[dict[str, Any]]) -> Selection:
    """The guard's split of the instances by their template's source paper (its first version)."""
    ids = [str(inst["instance_id"]) for inst in instances]
    if guard.mode == "off":
        return select(guard, ids, {})
    release = release_of(path)
    dates = {str(inst["instance_id"]): item_date(store, [str(inst.get("paper_id") or "")],
                                                 release.row(str(inst["instance_id"])) if release else None)
             for inst in instances}  # fmt: skip
    return select(guard, ids, dates)


def _failures(llm: LLM, label: str, instances: list[dict[str, Any]], outcomes: dict[tuple[int, int], Scored],
              n: int) -> list[dict[str, Any]]:  # fmt: skip
    """The wrong answers (answered, graded incorrect), with what the judge needs."""
    out = []
    for i, inst in enumerate(instances):
        for s in range(n):
            res = outcomes[(i, s)]
            if res.answered and not res.correct:
                reply = response_text(llm, res.detail.get("call_id"))
                out.append({"id": response_id(label, inst["instance_id"], s, reply), "instance_id":
                            inst["instance_id"], "model": label, "sample": s, "tier": inst.get("tier"),
                            "problem": inst["problem"], "expected": expected_of(inst)[0],
                            "solution": inst.get("solution_steps") or "", "reply": reply,
                            "finish_reason": _finish_reason(llm, res.detail.get("call_id"))})  # fmt: skip
    return out


def _finish_reason(llm: LLM, call_id: int | None) -> str | None:
    """How a stored reply ended (``stop``, ``length`` ...), when the provider said."""
    row = llm.store.get_call(call_id) if call_id else None
    if row is None or not row["response"]:
        return None
    return json.loads(row["response"]).get("finish_reason")


def _items(instances: list[dict[str, Any]], outcomes: dict[tuple[int, int], Scored], n: int,
           originality: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    items = []
    for i, inst in enumerate(instances):
        samples = []
        for s in range(n):
            res = outcomes[(i, s)]
            if res.answered:
                o = res.detail
                samples.append({"sample": s, "status": "ok", "correct": bool(o["correct"]), "extracted": o["extracted"],
                                "unreadable": bool(o.get("unreadable")), "call_id": o.get("call_id")})  # fmt: skip
            else:  # error: refused for good (counts, as not correct); pending: transient, asked again next run
                samples.append({"sample": s, "status": res.status, "correct": False, "error": res.error,
                                "call_id": res.call_ids[-1] if res.call_ids else None})  # fmt: skip
        item = {"instance_id": inst["instance_id"], "tier": inst.get("tier"), "msc": inst.get("msc") or [],
                "expected": expected_of(inst)[0], "academic_level": level_of(inst),
                "originality": originality.get(inst["instance_id"]), "samples": samples}  # fmt: skip
        item["score"] = item_score(item)
        items.append(item)
    return items


def taxonomy_section(store: Store, labels: list[dict[str, Any]], judge: str | None) -> dict[str, Any]:
    """Labels with a person's overrides applied, and their counts."""
    rows = apply_overrides(store, labels)
    return {"judge": judge, "failures": len(rows), "labelled": sum(r["status"] == "ok" for r in rows),
            "overridden": sum(r.get("source") == "person" for r in rows),
            "unlabelled": sum(r["status"] != "ok" for r in rows), "counts": counts(rows), "labels": rows}  # fmt: skip


def folder_report(out_dir: Path, file_digest: str) -> Path:
    """``report.md`` over every results file in ``out_dir`` scored on the same instances file."""
    docs = []
    for path in sorted(out_dir.glob("results_*.json")):
        try:
            doc = load_results([path])[0]
        except UserError:  # another tool's file in the folder: not part of this report
            continue
        if doc.get("file_sha256") == file_digest:
            docs.append(doc)
    return write_report(docs, out_dir)


def import_taxonomy(store: Store, labels_file: str | Path, results_path: str | Path) -> tuple[int, Path]:
    """Store a person's labels for the failures of a results file, then rewrite it and its folder's report."""
    results_path = Path(results_path)
    doc = load_results([results_path])[0]
    rows = doc["taxonomy"]["labels"]
    stored = import_overrides(store, labels_file, {r["id"] for r in rows})
    doc["taxonomy"] = taxonomy_section(store, rows, doc["taxonomy"].get("judge"))
    write_json(results_path, doc)
    return stored, folder_report(results_path.parent, doc["file_sha256"])


def _log(doc: dict[str, Any], instances: list[dict[str, Any]], outcomes: dict[tuple[int, int], Scored], llm: LLM,
         started: datetime, log_dir: Path | None) -> Path:  # fmt: skip
    scored = [outcomes[(i, s)] for i in range(len(instances)) for s in range(doc["samples_per_item"])]
    samples = log_samples(scored, messages=lambda sample: answer_messages(instances[sample.index]["problem"]),
                          completion=lambda sc: response_text(llm, sc.detail.get("call_id")),
                          metadata=lambda sc: {"tier": instances[sc.sample.index].get("tier"),
                                               "msc": instances[sc.sample.index].get("msc") or []})  # fmt: skip
    overall = doc["summary"]["overall"]
    metrics = {"accuracy": overall["value"] or 0.0, "ci95_low": overall["ci95"][0], "ci95_high": overall["ci95"][1],
               "n": float(overall["n"])}  # fmt: skip
    return write_inspect_log(task="theorembench/eternal", model=doc["model"], dataset_name=Path(doc["file"]).name,
                             dataset_path=doc["file"], samples=samples, metrics=metrics,
                             config={"run_id": doc["run_id"], "n": doc["samples_per_item"]}, started_at=started,
                             log_dir=log_dir or default_log_dir(), run_id=doc["run_id"],
                             scorer="final_answer")  # fmt: skip


__all__ = ["evaluate_eternal", "folder_report", "import_taxonomy", "taxonomy_section"]
