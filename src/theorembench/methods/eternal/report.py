"""The EternalMath report: Markdown with SVG charts (accuracy by tier, radar D1–D6, taxonomy counts).

It reads results documents as ``evaluate_eternal`` writes them (one per model, same
instances file). Every accuracy is shown with its 95% interval and sample size; the
radar's ambiguous choices (which models, population σ, what D5 counts) are written out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_text
from theorembench.common.stats import Estimate, quote
from theorembench.methods.eternal.figures import tier_groups
from theorembench.methods.eternal.radar import AXES, radar
from theorembench.methods.eternal.scoring import TIER_ORDER
from theorembench.methods.eternal.taxonomy import CATEGORIES
from theorembench.report.charts import accuracy_bars, count_bars, radar_svg
from theorembench.sandbox import combine, describe, summary_line


def safe_name(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9.\-]+", "_", model)


def cell(b: Mapping[str, Any] | None) -> str:
    """``94.8% [89.2–97.6] n=116`` for an accuracy block, this shape or one written before (``n=0`` when empty)."""
    return quote(b)


def accuracy(b: Mapping[str, Any] | None) -> float | None:
    """A block's accuracy (a fraction), whichever shape wrote it; None when nothing was scored."""
    est = Estimate.from_dict(b)
    return None if est is None or not est.n else est.value


def instances_isolation(instances: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The sandbox isolation a file of instances was validated under: the layers every instance's run had, full
    only if each was, weaker isolation accepted if it was for any; how many instances recorded none."""
    records, missing = [], 0
    for inst in instances:
        ex = inst.get("execution") or {}
        if not ex.get("isolation"):
            missing += 1
            continue
        records.append(describe(ex["isolation"], bool(ex.get("weak_isolation_accepted"))))
    found = combine(records)
    return None if found is None else found | {"instances_without_record": missing}


def load_results(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Results documents from files; UserError when one is unreadable or not an ``eternal eval`` result."""
    docs = []
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"{path}: cannot read an eternal eval result ({exc})") from None
        if not isinstance(doc, dict) or doc.get("kind") != "eternal.eval":
            raise UserError(f"{path}: not an `eternal eval` results file")
        docs.append(doc)
    return docs


def radars(docs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """D1–D6 over all scored instances and over the hard tier (when every model has hard instances)."""
    items = docs[0]["items"] if docs else []
    out: dict[str, Any] = {}
    accuracies = {d["model"]: accuracy(d["summary"]["overall"]) for d in docs
                  if accuracy(d["summary"]["overall"]) is not None}  # fmt: skip
    if accuracies:
        out["all"] = radar(accuracies, items)
    hard = {d["model"]: accuracy(d["summary"]["by_tier"].get("hard")) for d in docs
            if accuracy(d["summary"]["by_tier"].get("hard")) is not None}  # fmt: skip
    if hard and len(hard) == len(docs):
        out["hard"] = radar(hard, [i for i in items if i.get("tier") == "hard"], scope="hard-tier")
    return out


def render(docs: Sequence[Mapping[str, Any]]) -> tuple[str, dict[str, str]]:
    """The Markdown text and the SVG charts (file name -> SVG) for results of one or more models."""
    if not docs:
        raise UserError("no results to report")
    files = {d.get("file") for d in docs}
    svgs: dict[str, str] = {}
    first = docs[0]["summary"]
    lines = ["# EternalMath evaluation", ""]
    lines.append(f"Instances file: `{docs[0].get('file')}`" + ("" if len(files) == 1 else " (and others: see below)"))
    lines += ["", f"Sandbox isolation of the instances' validation: {_isolation_text(docs[0].get('isolation'))}", ""]
    share = ", ".join(f"{t} {s['n']} ({100 * s['share']:.2f}%)" for t, s in first["tier_share"].items())
    lines += [f"Scored instances: {first['scored']} ({share}). Scoring by final answers only, through the answer "
              "checker; intervals are 95% (Wilson for one sample per instance, Wilson at the mean over instances for "
              "mean@n).",
              ""]  # fmt: skip
    tiers = [t for t in TIER_ORDER if any(t in d["summary"]["by_tier"] for d in docs)]
    lines += ["## Accuracy by tier", "", "| model | samples | overall | " + " | ".join(tiers) + " |",
              "|---|---|---|" + "---|" * len(tiers)]  # fmt: skip
    for d in docs:
        s = d["summary"]
        lines.append(f"| {d['model']} | {s['samples_per_item']} | {cell(s['overall'])} | "
                     + " | ".join(cell(s["by_tier"].get(t)) for t in tiers) + " |")  # fmt: skip
    lines.append("")
    for d in docs:
        name = f"tiers_{safe_name(d['model'])}.svg"
        groups = {t: {"accuracy": accuracy(b), "correct": b["correct"], "total": b["n"], "ci95": b["ci95"]}
                  for t, b in d["summary"]["by_tier"].items() if accuracy(b) is not None}  # fmt: skip
        if groups:
            svgs[name] = accuracy_bars(groups, title=f"{d['model']}: accuracy by tier", baseline=None)
            lines.append(f"![accuracy by tier, {d['model']}]({name})")
    lines += _comparison(docs, tiers, svgs)
    errors = [f"{d['model']}: {d['summary']['failed_samples']} samples without an answer, counted as not correct: "
              f"{d['summary']['errors']} refused for good, {d['summary'].get('pending', 0)} failed transiently "
              f"(run again to ask those again)" for d in docs if d["summary"]["failed_samples"]]  # fmt: skip
    if errors:
        lines += ["", *(f"- {e}" for e in errors)]
    classes = sorted({c for d in docs for c in d["summary"]["by_msc"]})
    lines += ["", "## Accuracy by MSC class", "", "| class | " + " | ".join(d["model"] for d in docs) + " |",
              "|---|" + "---|" * len(docs)]  # fmt: skip
    for c in classes:
        lines.append(f"| {c} | " + " | ".join(cell(d["summary"]["by_msc"].get(c)) for d in docs) + " |")
    lines += _radar_section(docs, svgs)
    lines += _taxonomy_section(docs, svgs)
    if len(files) > 1:
        lines += ["", "Note: these results come from different instances files: " + ", ".join(map(str, files))]
    return "\n".join(lines) + "\n", svgs


def _comparison(docs: Sequence[Mapping[str, Any]], tiers: Sequence[str], svgs: dict[str, str]) -> list[str]:
    """The paper's Figures 4 and 5: every model side by side, overall (ranked) and per tier."""
    overall = {d["model"]: {"accuracy": accuracy(b), "correct": b["correct"], "total": b["n"], "ci95": b["ci95"]}
               for d in docs if accuracy(b := d["summary"]["overall"]) is not None}  # fmt: skip
    if not overall:
        return []
    svgs["models.svg"] = accuracy_bars(overall, title="Accuracy of each model (Figure 4)", baseline=None)
    series = {d["model"]: {t: {"accuracy": accuracy(b), "ci95": b["ci95"]} for t, b in d["summary"]["by_tier"].items()}
              for d in docs}  # fmt: skip
    svgs["tiers_by_model.svg"] = tier_groups(series, list(tiers), title="Accuracy by tier, models side by side "
                                                                       "(Figure 5)")  # fmt: skip
    return ["", "## Models side by side (Figures 4 and 5)", "", "![accuracy of each model](models.svg)", "",
            "![accuracy by tier, models side by side](tiers_by_model.svg)"]  # fmt: skip


def _isolation_text(record: Mapping[str, Any] | None) -> str:
    text = summary_line(record)
    if record and record.get("instances_without_record"):
        text += f"; {record['instances_without_record']} instance(s) without a record"
    return text


def _radar_section(docs: Sequence[Mapping[str, Any]], svgs: dict[str, str]) -> list[str]:
    found = radars(docs)
    if not found:
        return []
    names = list(found)
    lines = ["", "## Radar indicators D1–D6 (Appendix A.1)", "",
             "| indicator | " + " | ".join("all" if n == "all" else "hard tier" for n in names) + " |",
             "|---|" + "---|" * len(names)]  # fmt: skip
    for key, label in AXES.items():
        vals = [found[n]["indicators"][key] for n in names]
        lines.append(f"| {key} {label} | " + " | ".join("undefined" if v is None else f"{v:.2f}" for v in vals) + " |")
    lines += ["", "Choices made:"]
    shown: set[str] = set()
    for n in names:
        for c in found[n]["choices"]:
            if c not in shown:
                shown.add(c)
                lines.append(f"- {c}" if n == names[0] else f"- (hard tier) {c}")
    series = {("all instances" if n == "all" else "hard tier"): found[n]["indicators"] for n in names}
    svgs["radar.svg"] = radar_svg(series, AXES, title="EternalMath radar D1–D6")
    return [*lines, "", "![radar D1–D6](radar.svg)"]


def _taxonomy_section(docs: Sequence[Mapping[str, Any]], svgs: dict[str, str]) -> list[str]:
    labelled = [d for d in docs if d.get("taxonomy")]
    if not labelled:
        return []
    lines = ["", "## Error taxonomy (Table 4 categories)", "",
             "Labels by the judge model; a person's imported labels override them. A response may carry several.",
             "", "| category | " + " | ".join(d["model"] for d in labelled) + " |",
             "|---|" + "---|" * len(labelled)]  # fmt: skip
    total = {name: 0 for name in CATEGORIES}
    for name in CATEGORIES:
        row = [d["taxonomy"]["counts"].get(name, 0) for d in labelled]
        total[name] = sum(row)
        lines.append(f"| {name} | " + " | ".join(map(str, row)) + " |")
    for d in labelled:
        lines += ["", f"- {d['model']}: {_labelled_by(d['taxonomy'])}"]
    svgs["taxonomy.svg"] = count_bars(total, title="Error categories (all models)")
    return [*lines, "", "![error categories](taxonomy.svg)"]


def _labelled_by(t: Mapping[str, Any]) -> str:
    """Who labelled a model's wrong responses, in words (no judge given: none was labelled by a model)."""
    people = f"{t['overridden']} labelled by a person"
    if not t.get("judge"):
        return (f"{t['failures']} wrong responses; no judge model was given, so none has a judge's labels "
                f"({people}; give a judge to label them)")  # fmt: skip
    return (f"{t['labelled']} of {t['failures']} wrong responses labelled by the judge {t['judge']}, {people} "
            f"(overriding), {t['unlabelled']} without labels (judge step failed: run again)")  # fmt: skip


def write_report(docs: Sequence[Mapping[str, Any]], out_dir: str | Path, *, name: str = "report.md") -> Path:
    """Write the Markdown report and its SVG charts into ``out_dir``; returns the report's path."""
    text, svgs = render(docs)
    out_dir = Path(out_dir)
    for file, svg in svgs.items():
        write_text(out_dir / file, svg)
    return write_text(out_dir / name, text)


__all__ = ["accuracy", "cell", "instances_isolation", "load_results", "radars", "render", "safe_name", "write_report"]
