"""What a release of EternalMath needs besides its instances: Table 1, a public subset, and the audit's removals.

* :func:`msc_table` — the paper's Table 1: the share of papers per MSC2020 class. A paper counts
  once, under its primary class (the first of its instances' ``msc``); classes under ``other_below``
  of the papers are grouped as "Other", as the paper groups those under 1.5%.
* :func:`export_public` — a public subset with the answers withheld, like the paper's 30-problem
  release: ``n`` instances drawn with a seed, in proportion to their tiers (largest remainders), with
  only what a solver sees (id, problem, answer kind, tier, MSC classes). The answers, the solution
  steps, the exact expressions and the parameters go to a separate key file, to keep private.
* :func:`remove_invalid` — the instances an audit marked invalid taken out of an instances file
  (with ``whole_template``, every instance of their templates: one wrong formula makes all suspect).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.outputs import write_jsonl
from theorembench.methods.eternal import msc as M
from theorembench.methods.eternal.answering import load_instances
from theorembench.methods.eternal.audit import audit_import

PUBLIC_FIELDS = ("instance_id", "problem", "answer_kind", "tier", "msc")
KEY_FIELDS = ("instance_id", "numerical_value", "exact_expression", "solution_steps", "params_used", "template_id")


def _template_of(inst: dict[str, Any]) -> str:
    return str(inst.get("template_id") or str(inst["instance_id"]).split("#")[0])


def msc_table(instances: list[dict[str, Any]], *, other_below: float = 0.015) -> dict[str, Any]:
    """Table 1 over the papers the instances come from (an instance without ``paper_id`` counts by template)."""
    primary: dict[str, str] = {}
    for inst in instances:
        codes = [str(c)[:2] for c in inst.get("msc") or [] if str(c)[:2].isdigit()]
        paper = str(inst.get("paper_id") or _template_of(inst))
        primary.setdefault(paper, codes[0] if codes else "unclassified")
    total = len(primary)
    counts = Counter(primary.values())
    rows, other = [], {"papers": 0, "classes": []}
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if total and n / total < other_below:
            other["papers"] += n
            other["classes"].append(code)
        else:
            rows.append({"class": code, "name": M.class_name(code) if code != "unclassified" else "no MSC class",
                         "papers": n, "share": round(n / total, 4)})  # fmt: skip
    if other["papers"]:
        rows.append({"class": "other", "name": f"Other (< {100 * other_below:g}% each)", "papers": other["papers"],
                     "share": round(other["papers"] / total, 4), "classes": other["classes"]})  # fmt: skip
    return {"papers": total, "other_below": other_below, "rows": rows}


def _by_tier(instances: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    """``n`` instances drawn in proportion to the tiers (largest remainders; ties by tier name)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for inst in instances:
        groups.setdefault(str(inst.get("tier") or "untiered"), []).append(inst)
    quotas = {t: n * len(g) / len(instances) for t, g in groups.items()}
    take = {t: int(q) for t, q in quotas.items()}
    for t in sorted(groups, key=lambda t: (-(quotas[t] - take[t]), t))[: n - sum(take.values())]:
        take[t] += 1
    return [inst for t in sorted(groups) for inst in rng.sample(groups[t], take[t])]


def export_public(instances_path: str | Path, out: str | Path, *, n: int = 30, seed: int = 0) -> dict[str, Any]:
    """Write ``n`` instances without their answers to ``out`` (JSONL) and the answers to ``<name>.answers.jsonl``."""
    if n < 1:
        raise InvalidSetting("n", "must be at least 1")
    out = Path(out)
    instances = load_instances(instances_path)
    chosen = _by_tier(instances, min(n, len(instances)), random.Random(seed))
    public = [{k: inst.get(k) for k in PUBLIC_FIELDS} for inst in chosen]
    key_path = out.with_name(f"{out.stem}.answers.jsonl")
    write_jsonl(out, public)
    write_jsonl(key_path, [{k: inst.get(k) for k in KEY_FIELDS} for inst in chosen])
    tiers = dict(sorted(Counter(str(p["tier"] or "untiered") for p in public).items()))
    return {"public": out, "answers": key_path, "n": len(public), "requested": n, "available": len(instances),
            "tiers": tiers, "withheld": [k for k in KEY_FIELDS if k != "instance_id"]}  # fmt: skip


def remove_invalid(instances_path: str | Path, audit_path: str | Path, out: str | Path, *,
                   key: str | Path | None = None, whole_template: bool = False) -> dict[str, Any]:  # fmt: skip
    """The instances file without the instances the audit's experts marked invalid (or their whole templates)."""
    verdicts = audit_import(audit_path, key=key)
    if "invalid_instances" not in verdicts:
        raise UserError(f"{audit_path}: no audit key found beside it (give the key): the invalid ids are unknown")
    instances = load_instances(instances_path)
    invalid = set(verdicts["invalid_instances"])
    known = {inst["instance_id"] for inst in instances}
    missing = sorted(invalid - known)
    templates = {_template_of(inst) for inst in instances if inst["instance_id"] in invalid}
    drop = [inst for inst in instances if inst["instance_id"] in invalid or (whole_template and
                                                                           _template_of(inst) in templates)]  # fmt: skip
    gone = {inst["instance_id"] for inst in drop}
    kept = [inst for inst in instances if inst["instance_id"] not in gone]
    path = write_jsonl(Path(out), kept)
    return {"out": path, "kept": len(kept), "removed": sorted(gone), "invalid": sorted(invalid & known),
            "templates": sorted(templates), "not_in_file": missing, "precision": verdicts["shown"]}  # fmt: skip


__all__ = ["KEY_FIELDS", "PUBLIC_FIELDS", "export_public", "msc_table", "remove_invalid"]
