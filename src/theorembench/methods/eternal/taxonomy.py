"""Error taxonomy of failed responses (the nine categories of the paper's Table 4), by a judge, with human overrides.

A judge model gives each wrong answer one or more category labels as JSON checked against
a schema whose labels are the nine names; a reply that still names anything else after
the bounded repair turns is a failed step (asked again next time), never a label. Labels
are exported to CSV or JSON; a person's edited file is imported as overrides, stored in
the store and applied over the judge's labels wherever they are shown. An import with an
unknown id or category stores nothing and reports one line per bad row.

A long reply is shown by its head and its tail (``MAX_REPLY_CHARS`` in all), and the judge is also
told what it cannot see: the reply's length, its finish reason (cut at the token limit or not),
whether it boxes an answer, and its repeated lines, in the middle left out and overall, so that a
Redundancy Loop or a Stop-too-early is visible however long the reply.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.inputs import read_rows
from theorembench.common.outputs import write_json, write_text
from theorembench.llm import LLM, GenerateSettings, ModelSpec
from theorembench.methods.eternal.answering import settings_digest
from theorembench.pipeline.steps import StepResult, StepRunner
from theorembench.store import Store
from theorembench.store.steps import Steps

CATEGORIES: dict[str, str] = {
    "Knowledge Gap": "the specialised, research-level result the problem needs is missing; the reply falls back on "
                     "generic textbook tools",
    "Stop-too-early": "the reply does the easy set-up and then skips the decisive step with a vague summary",
    "Logical Hallucination": "the reply invents a property, identity or rule, or uses a theorem whose hypotheses "
                             "it never checks",
    "Calculation Drift": "the method is sound but symbolic or arithmetic work goes wrong along the way",
    "Over-generalization": "a pattern seen in small or special cases is extended to the general case without proof",
    "Conceptual Misstep": "a definition or concept is misread, or two similar notions are confused",
    "Boundary Neglect": "exceptional, degenerate or singular cases that change the answer are ignored",
    "Redundancy Loop": "the reply keeps restating definitions or equivalent facts without making progress",
    "Inconsistency": "the reply contradicts itself between steps or produces incompatible intermediate results",
}  # fmt: skip
PROMPT_VERSION = "eternal-taxonomy-2"
OVERRIDES = "eternal.taxonomy/overrides"
EXPORT_FIELDS = ("id", "instance_id", "model", "sample", "tier", "labels", "source", "rationale")
MAX_REPLY_CHARS = 12_000

LABEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "labels": {"type": "array", "items": {"enum": list(CATEGORIES)}, "minItems": 1, "maxItems": len(CATEGORIES)},
        "rationale": {"type": "string"},
    },
    "required": ["labels", "rationale"],
}
SYSTEM = ("You review wrong answers to research-level mathematics problems and say which kinds of error made "
          "them wrong. You are given the problem, its verified answer and solution, and the reply.")  # fmt: skip


def _key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


_CANONICAL = {_key(name): name for name in CATEGORIES}


def canonical(name: str) -> str | None:
    """The category a name means (case, spaces and hyphens ignored), or None."""
    return _CANONICAL.get(_key(name))


def response_id(model: str, instance_id: str, sample: int, reply: str) -> str:
    """A failed response's id: model, instance, sample and a digest of the reply (a new reply gets a new id)."""
    return f"{model}|{instance_id}|{sample}|{hashlib.sha256(reply.encode()).hexdigest()[:8]}"


def _repeats(lines: list[str]) -> tuple[int, str, int]:
    """How many lines repeat an earlier one, and the most repeated line with its count (lines of 20+ characters)."""
    counts = Counter(line for line in lines if len(line) >= 20)
    if not counts:
        return 0, "", 0
    top, times = counts.most_common(1)[0]
    return sum(c - 1 for c in counts.values() if c > 1), top, times


def reply_facts(reply: str, finish_reason: str | None = None) -> str:
    """What the judge is told about the whole reply, also where it only sees its head and tail: its length, how it
    ended (a reply cut at the token limit is an early stop, not a conclusion), and its repeated lines (a loop)."""
    lines = [" ".join(line.split()) for line in reply.splitlines() if line.strip()]
    repeated, top, times = _repeats(lines)
    facts = [f"{len(reply)} characters, {len(lines)} non-empty lines"]
    if finish_reason:
        ended = " (it hit the token limit: cut off, not concluded)" if finish_reason == "length" else ""
        facts.append(f"it ended with finish reason {finish_reason!r}{ended}")
    facts.append("it gives a \\boxed{} answer" if "\\boxed" in reply else "it gives no \\boxed{} answer")
    if repeated:
        facts.append(f"{repeated} lines repeat an earlier line; the most repeated one occurs {times} times: "
                     f"\"{top[:200]}\"")  # fmt: skip
    return "; ".join(facts)


def _shorten(text: str) -> str:
    """The reply within MAX_REPLY_CHARS: its head and its tail, with what the middle held in between."""
    if len(text) <= MAX_REPLY_CHARS:
        return text
    half = MAX_REPLY_CHARS // 2
    middle = text[half:-half]
    repeated, top, times = _repeats([" ".join(x.split()) for x in middle.splitlines() if x.strip()])
    loop = f"; in it {repeated} lines repeat an earlier one (most often, {times} times: \"{top[:200]}\")" \
        if repeated else ""  # fmt: skip
    return f"{text[:half]}\n\n[... {len(middle)} characters left out{loop} ...]\n\n{text[-half:]}"


def judge_messages(problem: str, expected: str, solution: str, reply: str,
                   finish_reason: str | None = None) -> list[dict[str, str]]:  # fmt: skip
    """The messages that ask the judge to label one wrong reply."""
    listing = "\n".join(f"- {name}: {text}." for name, text in CATEGORIES.items())
    user = (f"Problem:\n{problem}\n\nVerified answer: {expected}\n\nReference solution:\n{solution or '(none given)'}"
            f"\n\nAbout the whole reply: {reply_facts(reply, finish_reason)}."
            f"\n\nThe reply, whose final answer is wrong:\n<<<\n{_shorten(reply)}\n>>>\n\n"
            f"Error categories:\n{listing}\n\n"
            "Name every category that applies to this reply (at least one), using the names exactly as written "
            "above, and say briefly why. Answer with JSON only: "
            '{"labels": ["<category>", ...], "rationale": "<one or two sentences>"}')  # fmt: skip
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


async def label_failures(store: Store, llm: LLM, judge: ModelSpec, failures: Sequence[Mapping[str, Any]],
                         settings: GenerateSettings) -> list[dict[str, Any]]:  # fmt: skip
    """Judge labels for failed responses (``id``, ``problem``, ``expected``, ``solution``, ``reply`` and row fields).

    Each is a step of ``eternal.taxonomy/<judge and prompt digest>`` keyed by the response id.
    """
    pipeline = "eternal.taxonomy/" + settings_digest(PROMPT_VERSION, SYSTEM, judge.name, judge.endpoint,
                                                     CATEGORIES, settings.cache_fields())  # fmt: skip
    runner = StepRunner(store, pipeline)

    async def one(f: Mapping[str, Any]) -> dict[str, Any]:
        async def ask() -> dict[str, Any]:
            msgs = judge_messages(f["problem"], f["expected"], f["solution"], f["reply"], f.get("finish_reason"))
            value, _ = await llm.generate_json(judge, msgs, LABEL_SCHEMA, settings, purpose="eternal.taxonomy")
            labels = list(dict.fromkeys(value["labels"]))
            return {"labels": labels, "rationale": str(value.get("rationale", ""))}

        res: StepResult = await runner.run(f["id"], "label", ask)
        row = {k: f[k] for k in ("id", "instance_id", "model", "sample", "tier")}
        if res.ok:
            return {**row, "labels": res.output["labels"], "source": "judge", "rationale": res.output["rationale"],
                    "status": "ok", "call_ids": res.call_ids}  # fmt: skip
        return {**row, "labels": [], "source": "judge", "rationale": "", "status": "failed", "reason": res.reason,
                "call_ids": res.call_ids}  # fmt: skip

    return list(await asyncio.gather(*(one(f) for f in failures)))


def apply_overrides(store: Store, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows with a person's stored labels in place of the judge's wherever there is an override."""
    steps = Steps(store, OVERRIDES)
    out = []
    for row in rows:
        found = steps.get(row["id"], "override")
        if found is not None and found.ok:
            out.append({**row, "labels": found.output["labels"], "source": "person",
                        "rationale": found.output.get("note") or row.get("rationale", ""), "status": "ok"})  # fmt: skip
        else:
            out.append(dict(row))
    return out


def counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many labelled responses carry each category (a response with two labels counts in both)."""
    return {name: sum(name in (r.get("labels") or []) for r in rows if r.get("status") == "ok") for name in CATEGORIES}


def export_labels(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write labels for a person to edit: CSV (labels joined by "; ") or JSON (labels as lists), by the suffix."""
    path = Path(path)
    records = [{k: row.get(k) for k in EXPORT_FIELDS} for row in rows]
    if path.suffix.lower() == ".json":
        return write_json(path, records)
    if path.suffix.lower() != ".csv":
        raise UserError(f"{path}: export to a .csv or .json file")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_FIELDS, lineterminator="\n")
    writer.writeheader()
    for rec in records:
        writer.writerow({**rec, "labels": "; ".join(rec["labels"] or [])})
    return write_text(path, buffer.getvalue())


def read_overrides(path: str | Path, known_ids: set[str]) -> dict[str, dict[str, Any]]:
    """Validated ``id -> {labels, note}`` from a person's file; UserError with one line per bad row otherwise."""
    problems: list[str] = []
    found: dict[str, dict[str, Any]] = {}
    for where, row in read_rows(path, ("id", "labels")):
        rid = str(row.get("id") or "").strip()
        raw = row.get("labels")
        names = raw if isinstance(raw, list) else re.split(r"[;,]", str(raw or ""))
        names = [str(n).strip() for n in names if str(n).strip()]
        bad = [n for n in names if canonical(n) is None]
        if rid not in known_ids:
            problems.append(f"{where}: unknown id {rid!r}")
        elif rid in found:
            problems.append(f"{where}: id {rid!r} appears twice")
        elif bad:
            problems.append(f"{where}: unknown categor{'ies' if len(bad) > 1 else 'y'} "
                            f"{', '.join(repr(b) for b in bad)}")  # fmt: skip
        elif not names:
            problems.append(f"{where}: no label (give at least one category)")
        else:
            labels = list(dict.fromkeys(canonical(n) for n in names))
            found[rid] = {"labels": labels, "note": str(row.get("rationale") or "")}
    if problems:
        raise UserError("\n".join(problems))
    return found


def import_overrides(store: Store, path: str | Path, known_ids: set[str]) -> int:
    """Store a person's labels as overrides (all or nothing); returns how many rows were stored."""
    found = read_overrides(path, known_ids)
    steps = Steps(store, OVERRIDES)
    for rid, value in found.items():
        steps.put(rid, "override", StepResult("ok", value))
    return len(found)


__all__ = ["CATEGORIES", "LABEL_SCHEMA", "apply_overrides", "canonical", "counts", "export_labels",
           "import_overrides", "judge_messages", "label_failures", "read_overrides", "reply_facts", "response_id"]  # fmt: skip
