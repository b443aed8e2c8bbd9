"""Run an MCQ evaluation: every item through the LLM layer, results into the store.

Each answered item is committed to the store the moment it is scored, so a run
killed at any point resumes (``resume=True``) with what was done: items whose every
sample has an answer are kept; failed items are asked again, and so are items whose
reply named no option (as the released scripts keep only records that have an
answer): their unparsed samples are asked anew, past the cache.

A run is found for resuming by its signature: the file, the model name and the
endpoint that serves it (address and revision tag), the mode, the samples, the seed,
the prompts and the generation settings. Two servers behind one model name never share
a run.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.common.outputs import write_json
from theorembench.common.progress import OnCount
from theorembench.common.shard import Shard
from theorembench.common.stats import Estimate
from theorembench.evaluate.cutoff import Selection
from theorembench.evaluate.mcq import protocol
from theorembench.evaluate.mcq.documents import output_doc, write_log
from theorembench.evaluate.mcq.items import Dataset, Item
from theorembench.evaluate.mcq.protocol import Presented, extract_answer, messages, shuffle_options
from theorembench.evaluate.mcq.released import released_results
from theorembench.evaluate.mcq.summary import sketch_gain, summarize
from theorembench.evaluate.result import EvalResult
from theorembench.evaluate.samples import Sample, Scored, run_samples
from theorembench.evaluate.scorecard import scored
from theorembench.evaluate.shards import shard_signature
from theorembench.llm import LLM, Completion, GenerateSettings, ModelSpec
from theorembench.pipeline.identity import source_digest
from theorembench.pipeline.steps import StepRunner
from theorembench.store import Store, loads

KIND = "eval.mcq"


@dataclass
class MCQConfig:
    model: str
    sketch: bool = False
    n: int = 1
    seed: int = 42
    limit: int | None = None
    resume: bool = False
    prompt_style: str = "released"
    settings: GenerateSettings = field(default_factory=lambda: GenerateSettings(max_tokens=16384))
    out: Path | None = None
    log_dir: Path | None = None
    write_log: bool = True
    spec: ModelSpec | None = None  # resolved endpoint; resolved from ``model`` when None
    system_prompt: str | None = None  # replaces our system prompt
    user_template: str | None = None  # replaces the released user-message layout
    prompt_sources: dict[str, str] = field(default_factory=dict)  # where they came from (files), for the record
    preset: str | None = None  # the sampling preset the settings came from, for the record
    results_flavour: str = "theorembench"  # or "released": the authors' results file (evaluate/mcq/released.py)
    shard: Shard | None = None  # ask only this shard's items; the results files are written by the merge

    def prompt_for(self, item: Item, index: int) -> tuple[Presented, list[dict[str, str]]]:
        """The item as shown (shuffled, keyed) and the messages sent for it."""
        presented = shuffle_options(item, index, self.seed)
        return presented, messages(item, presented, sketch=self.sketch, style=self.prompt_style,
                                   system=self.system_prompt, user_template=self.user_template)  # fmt: skip

    def signature(self, dataset_id: str, endpoint: str) -> str:
        payload = {
            "dataset": dataset_id,
            "model": self.model,
            "endpoint": endpoint,
            "sketch": self.sketch,
            "n": self.n,
            "seed": self.seed,
            "prompt_style": self.prompt_style,
            "settings": self.settings.cache_fields(),
            # the protocol's own prompt texts and answer extraction: edit them and the run is made anew
            "protocol": source_digest([protocol], constants=True),
        }
        if self.system_prompt is not None:
            payload["system_prompt"] = self.system_prompt
        if self.user_template is not None:
            payload["user_template"] = self.user_template
        return json_digest(payload, 32, ascii_only=True)


def default_out_path(cfg: MCQConfig, month: str) -> Path:
    safe_model = re.sub(r"[^A-Za-z0-9.\-]+", "_", cfg.model)
    effort = cfg.settings.reasoning_effort or "default"
    suffix = "_sketch" if cfg.sketch else ""
    return Path("results") / month / f"accuracy_test_{safe_model}_{month}_{effort}{suffix}.json"


def _sample_record(completion: Completion | None, error: str | None, correct_label: str) -> dict[str, Any]:
    if completion is None:
        return {
            "model_answer": None, "raw_response": "", "reasoning": None, "is_correct": False,
            "status": "error", "error": error, "prompt_tokens": 0, "completion_tokens": 0,
            "total_tokens": 0, "reasoning_tokens": 0, "elapsed_seconds": 0.0,
            "cost_usd": None, "call_id": None, "cached": False,
        }  # fmt: skip
    answer = extract_answer(completion.text)
    return {
        "model_answer": answer,
        "raw_response": completion.text,
        "reasoning": completion.reasoning,
        "is_correct": answer == correct_label,
        "status": "ok" if answer else "unparsed",
        "error": None,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "total_tokens": completion.total_tokens,
        "reasoning_tokens": completion.reasoning_tokens,
        "elapsed_seconds": round(completion.latency_s, 4),
        "cost_usd": completion.cost_usd,
        "call_id": completion.call_id,
        "cached": completion.cached,
        "attempts": completion.attempts,
    }


def _item_record(item: Item, raw: dict[str, Any], index: int, correct_label: str,
                 origin: dict[str, str], samples: list[dict[str, Any]], cfg: MCQConfig) -> dict[str, Any]:  # fmt: skip
    first = samples[0]
    rubric = raw.get("qa quality eval")
    score = rubric.get("total_score") if isinstance(rubric, dict) else None
    record = {
        "id": item.id,
        "theorem_type": raw.get("theorem_type"),
        "score": score,
        "correct_answer": correct_label,
        "model_answer": first["model_answer"],
        "raw_response": first["raw_response"],
        "is_correct": bool(first["is_correct"]),
        "reasoning_effort": cfg.settings.reasoning_effort,
        "prompt_tokens": first["prompt_tokens"],
        "completion_tokens": first["completion_tokens"],
        "total_tokens": first["total_tokens"],
        "reasoning_tokens": first["reasoning_tokens"],
        "elapsed_seconds": first["elapsed_seconds"],
        "error": first["error"],
        "n_samples": cfg.n,
        "samples": samples if cfg.n > 1 else [],
        # theorembench additions
        "index": index,
        "status": first["status"],
        "option_origin": origin,
        "reasoning": first["reasoning"],
        "cost_usd": first["cost_usd"],
        "call_id": first["call_id"],
        "cached": first["cached"],
    }
    if cfg.n == 1:
        record["samples"] = []
    return record


class _ItemSamples:
    """The released protocol's sample for the one sample loop: one shuffled item asked once (samples in
    ``fresh``, unparsed in an earlier run, are asked past the cache), scored by its extracted letter."""

    stage = "answer"

    def __init__(self, llm: LLM, spec: ModelSpec, cfg: MCQConfig, presented: Presented,
                 msgs: list[dict[str, str]], fresh: set[int]):  # fmt: skip
        self.llm, self.spec, self.cfg, self.presented, self.msgs, self.fresh = llm, spec, cfg, presented, msgs, fresh

    def key(self, sample: Sample) -> str:
        return f"{sample.index}#{sample.epoch}"

    def target(self, sample: Sample) -> str:
        return self.presented.correct_label

    async def ask(self, sample: Sample) -> dict[str, Any]:
        completion = await self.llm.generate(self.spec, self.msgs, self.cfg.settings, purpose=KIND, sample=sample.epoch,
                                             use_cache=False if sample.epoch in self.fresh else None)  # fmt: skip
        return _sample_record(completion, None, self.presented.correct_label)

    def score(self, sample: Sample, record: dict[str, Any]) -> Scored:
        return Scored(sample, record["status"], float(bool(record["is_correct"])), self.target(sample),
                      answer=record["model_answer"], call_ids=[record["call_id"]], detail=record)  # fmt: skip


async def _evaluate_item(llm: LLM, spec: ModelSpec, cfg: MCQConfig, index: int, item: Item, raw: dict[str, Any],
                         fresh: set[int]) -> tuple[dict[str, Any], list[dict[str, Any]]]:  # fmt: skip
    """Ask every sample of one item through the sample loop (the run's result rows are its store: see
    :func:`_resumable`); a sample whose call failed is an ``error`` record, counted as wrong."""
    presented, msgs = cfg.prompt_for(item, index)
    task = _ItemSamples(llm, spec, cfg, presented, msgs, fresh)
    scored = await run_samples(StepRunner(None, KIND), task, [Sample(index, item.id, s) for s in range(cfg.n)])
    samples = [sc.detail if sc.answered else _failed_record(sc, presented.correct_label) for sc in scored]
    record = _item_record(item, raw, index, presented.correct_label, presented.origin, samples, cfg)
    record["_messages"] = msgs
    return record, samples


def _failed_record(sc: Scored, correct_label: str) -> dict[str, Any]:
    rec = _sample_record(None, (sc.error or "model call failed").removeprefix("answer: "), correct_label)
    rec["call_id"] = sc.call_ids[-1] if sc.call_ids else None
    return rec


async def run_mcq_async(
    store: Store,
    llm: LLM,
    dataset: Dataset,
    cfg: MCQConfig,
    *,
    on_start: OnCount | None = None,
    on_item: Callable[[dict[str, Any]], None] | None = None,
    selection: Selection | None = None,
) -> EvalResult:
    """``selection``: the contamination guard's choice; items it does not keep are neither asked nor scored.
    With ``cfg.shard``, only that shard's items are asked, in a run of the shard's own (resumed on its own), and
    no results file is written: :func:`theorembench.evaluate.mcq.merge.merge_mcq` writes them from every shard."""
    spec = cfg.spec or llm.resolve(cfg.model)
    indices = evaluated_indices(dataset, cfg, selection)
    if cfg.shard is not None:
        indices = [i for i in indices if cfg.shard.owns(dataset.items[i].id)]
    store.put_dataset(
        dataset.id, [(it.id, raw) for it, raw in zip(dataset.items, dataset.raw, strict=True)],
        path=str(dataset.path), name=dataset.name,
    )  # fmt: skip
    signature = cfg.signature(dataset.id, spec.endpoint)
    if cfg.shard is not None:
        signature = shard_signature(signature, cfg.shard)
    run_config = run_config_of(cfg, dataset, spec)
    done: dict[int, dict[str, Any]] = {}
    fresh: dict[int, set[int]] = {}
    run_id = None
    if cfg.resume:
        previous = store.latest_run(KIND, signature)
        if previous is not None:
            run_id = previous["id"]
            done, fresh = _resumable(store, run_id)
            store.set_run_status(run_id, "running")
    if run_id is None:
        run_id = store.create_run(KIND, signature, name=dataset.name, model=cfg.model,
                                  dataset_id=dataset.id, config=run_config)  # fmt: skip
    llm.run_id = run_id
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    calls_before, hits_before = llm.calls_made, llm.cache_hits
    todo = [i for i in indices if i not in done]
    if on_start:
        on_start(len(indices), len(indices) - len(todo))
    for i in indices:
        if i in done and on_item:
            on_item(done[i] | {"_resumed": True})
    records: dict[int, dict[str, Any]] = dict(done)
    transcripts: dict[int, list[dict[str, str]]] = {}

    async def work(i: int) -> None:
        record, samples = await _evaluate_item(llm, spec, cfg, i, dataset.items[i], dataset.raw[i],
                                               fresh.get(i, set()))  # fmt: skip
        transcripts[i] = record.pop("_messages")
        records[i] = record
        _store_item(store, run_id, i, record, samples)
        if on_item:
            on_item(record)

    try:
        await asyncio.gather(*(work(i) for i in todo))
    except BaseException:
        store.set_run_status(run_id, "interrupted")
        raise

    counters = {"calls_made": llm.calls_made - calls_before, "cache_hits": llm.cache_hits - hits_before,
                "resumed_items": len(done), "cost_usd_this_invocation": round(store.usage(run_id)["cost_usd"], 6)}
    ordered = {i: records[i] for i in indices}
    if cfg.shard is not None:  # the shard's part is in the store; the merge writes the results of every shard
        summary = summarize({i: dataset.items[i] for i in indices}, ordered, dataset.month) | counters
        summary["wall_seconds"] = round(time.perf_counter() - t0, 3)
        store.set_run_status(run_id, "finished", summary | {"shard": cfg.shard.label})
        output = output_doc(cfg, dataset, spec, indices, ordered, summary, started_at, run_id)
        return EvalResult(KIND, run_id, output, cfg.out or default_out_path(cfg, dataset.month), None,
                          Estimate.from_dict(summary["score"]), calls_made=counters["calls_made"],
                          cache_hits=counters["cache_hits"], resumed=len(done), incomplete=summary["errors"],
                          detail={"shard": cfg.shard.label})  # fmt: skip
    return write_results(store, cfg, dataset, spec, indices, ordered, transcripts, counters, started_at=started_at,
                         t0=t0, run_id=run_id, selection=selection)  # fmt: skip


def evaluated_indices(dataset: Dataset, cfg: MCQConfig, selection: Selection | None) -> list[int]:
    """The positions of the items a run evaluates: the first ``limit``, those the guard keeps."""
    indices = list(range(len(dataset.items)))
    if cfg.limit is not None:
        indices = indices[: cfg.limit]
    if selection is not None:
        indices = [i for i in indices if selection.keeps(dataset.items[i].id)]
    return indices


def run_config_of(cfg: MCQConfig, dataset: Dataset, spec: ModelSpec) -> dict[str, Any]:
    """What a run records of its settings (``shard``: which shard of the items it asked)."""
    return {
        "file": str(dataset.path), "dataset_id": dataset.id, "model": cfg.model, "endpoint": spec.endpoint,
        "revision": spec.revision, "sketch": cfg.sketch, "n": cfg.n, "seed": cfg.seed, "limit": cfg.limit,
        "prompt_style": cfg.prompt_style, "preset": cfg.preset, "prompts": cfg.prompt_sources,
        "system_prompt": cfg.system_prompt, "user_template": cfg.user_template,
        "settings": cfg.settings.model_dump(exclude_none=True), "shard": cfg.shard.label if cfg.shard else None,
    }  # fmt: skip


def write_results(store: Store, cfg: MCQConfig, dataset: Dataset, spec: ModelSpec, indices: list[int],
                  ordered: dict[int, dict[str, Any]], transcripts: dict[int, list[dict[str, str]]],
                  counters: dict[str, Any], *, started_at: datetime, t0: float, run_id: str,
                  selection: Selection | None, cost_runs: list[str] | None = None) -> EvalResult:  # fmt: skip
    """A finished run's outputs, the same for one run and for the merge of its shards: the summary (``counters``:
    calls made, cache hits, resumed items, cost), the results file, the Inspect log, the run's status and its
    scorecard. ``cost_runs``: the runs whose model calls the scorecard's cost adds up (the shards')."""
    summary = summarize({i: dataset.items[i] for i in indices}, ordered, dataset.month)
    summary.update(counters)
    summary["wall_seconds"] = round(time.perf_counter() - t0, 3)

    _add_sketch_gain(store, cfg, dataset, spec, indices, ordered, summary)
    if selection is not None:  # in the summary: the results file keeps the released layout's top-level keys
        summary["cutoff"] = selection.block({r["id"]: float(bool(r["is_correct"])) for r in ordered.values()},
                                            errors=[r["id"] for r in ordered.values() if r.get("status") == "error"])
    output = output_doc(cfg, dataset, spec, indices, ordered, summary, started_at, run_id)
    out_path = cfg.out or default_out_path(cfg, dataset.month)
    files = {}
    if cfg.results_flavour == "released":  # the authors' file where they expect it, ours beside it
        raw = {it.id: r for it, r in zip(dataset.items, dataset.raw, strict=True)}
        files["released"] = write_json(out_path, released_results(output, raw, started_at), indent=2)
        out_path = write_json(out_path.with_suffix(".theorembench.json"), output, indent=2)
    else:
        write_json(out_path, output, indent=2)

    log_path = None
    if cfg.write_log:
        log_path = write_log(cfg, dataset, indices, ordered, transcripts, summary, started_at, run_id)
    store.set_run_status(run_id, "finished", summary)
    detail = {"cutoff": summary.get("cutoff")} | ({"cost_runs": cost_runs} if cost_runs else {})
    return scored(store, EvalResult(KIND, run_id, output, out_path, log_path, Estimate.from_dict(summary["score"]),
                                    files=files, calls_made=summary["calls_made"], cache_hits=summary["cache_hits"],
                                    resumed=summary["resumed_items"], incomplete=summary["errors"], detail=detail),
                  items_file=dataset.path)  # fmt: skip


def _store_item(store: Store, run_id: str, index: int, record: dict[str, Any],
                samples: list[dict[str, Any]]) -> None:  # fmt: skip
    """An item's samples as result rows (the first carries the item's record, the rest their own)."""
    for s, sample in enumerate(samples):
        store.put_result(
            run_id, index, s, item_id=record["id"], status=sample["status"], record=record if s == 0 else sample,
            call_id=sample["call_id"], answer=sample["model_answer"], correct_label=record["correct_answer"],
            is_correct=sample["is_correct"], error=sample["error"],
        )  # fmt: skip


def _add_sketch_gain(store: Store, cfg: MCQConfig, dataset: Dataset, spec: ModelSpec, indices: list[int],
                     ordered: dict[int, dict[str, Any]], summary: dict[str, Any]) -> None:  # fmt: skip
    """The paired gain from the sketch, when the run in the other mode on the same items has finished."""
    other_sig = MCQConfig(**{**cfg.__dict__, "sketch": not cfg.sketch}).signature(dataset.id, spec.endpoint)
    other = store.latest_run(KIND, other_sig)
    if other is not None and other["status"] == "finished":
        mine = {i: bool(ordered[i]["is_correct"]) for i in indices}
        theirs = _first_sample_correct(store, other["id"], {i: dataset.items[i].id for i in indices})
        with_s, without_s = (mine, theirs) if cfg.sketch else (theirs, mine)
        items = {i: dataset.items[i] for i in indices}
        summary["sketch_gain"] = sketch_gain(items, with_s, without_s, dataset.month)
        summary["sketch_gain"]["other_run_id"] = other["id"]


def _resumable(store: Store, run_id: str) -> tuple[dict[int, dict[str, Any]], dict[int, set[int]]]:
    """The items a resumed run keeps (every sample answered) and, per item asked again, its unparsed samples."""
    done: dict[int, dict[str, Any]] = {}
    fresh: dict[int, set[int]] = {}
    for row in store.results(run_id):
        if row["sample"] != 0:
            continue
        record = loads(row["record"])
        samples = record.get("samples") or [record]
        if not record.get("error") and all(s.get("status") == "ok" for s in samples):
            done[row["idx"]] = record
        else:
            fresh[row["idx"]] = {k for k, s in enumerate(samples) if s.get("status") == "unparsed"}
    return done, fresh


def _first_sample_correct(store: Store, run_id: str, ids: dict[int, str]) -> dict[int, bool]:
    """Index -> first-sample correctness in another run, for the items of ``ids`` it answered."""
    return {row["idx"]: bool(row["is_correct"]) for row in store.results(run_id)
            if row["sample"] == 0 and ids.get(row["idx"]) == row["item_id"]}  # fmt: skip
