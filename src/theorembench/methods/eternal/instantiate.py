"""Steps e and g: instantiate templates with seeded parameters, run them in the sandbox, keep what passes.

For each template: draw ``n`` distinct parameter sets (``random.Random(f"{seed}:{template_id}")``;
a domain with fewer values gives all of them, and a rejection says so), check each against its
domain and the ``param_check`` rules, render the problem and the solution (rejecting unresolved
placeholders and parameter names left in the problem), then run the small-case check and every
remaining instance in one sandboxed process. The check stops at the first small case that does
not agree, and such a template is rejected as a whole. Instances are then judged (execution,
determinism, value rules) and deduplicated on their answers; each kept one carries its provenance.
"""

from __future__ import annotations

import hashlib
import math
import platform
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_json, write_jsonl
from theorembench.methods.eternal import params as P
from theorembench.methods.eternal.render import render_problem, render_solution
from theorembench.methods.eternal.template import Template
from theorembench.methods.eternal.validate import (
    JobOutcome,
    check_param_rules,
    cross_check_failure,
    judge_value,
    rule_notes,
    run_job,
)
from theorembench.sandbox import probe, tool_manifest

STAGES = ("template", "params", "execution", "determinism", "value_rule", "cross_check", "render", "duplicate")


@dataclass
class InstantiateResult:
    """Instances and rejections (dicts, one JSONL line each), the ids of validated templates, the summary."""

    instances: list[dict] = field(default_factory=list)
    rejections: list[dict] = field(default_factory=list)
    validated_templates: list[str] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    isolation: list[str] = field(default_factory=list)


def libraries() -> dict[str, Any]:
    """Python and the packages importable inside the sandbox, with versions (one sandboxed run)."""
    manifest = tool_manifest()
    return {"python": platform.python_version(), **manifest["python"]}


def instance_id(template_id: str, params_json: dict) -> str:
    return f"{template_id}#{hashlib.sha256(P.canonical(params_json).encode()).hexdigest()[:10]}"


def draw(template: Template, n: int, seed: int) -> tuple[list[dict[str, Any]], str | None]:
    """``n`` distinct parameter sets (Python values), and a note when the domain cannot give ``n``."""
    rng = random.Random(f"{seed}:{template.template_id}")
    names = list(template.params)
    sizes = [P.size(template.params[k]) for k in names]
    total = None if None in sizes else math.prod(s for s in sizes if s is not None)
    if total is not None and total <= P.ENUMERATE_UP_TO:
        combos = [{}]
        for k in names:
            combos = [dict(c, **{k: v}) for c in combos for v in P.values(template.params[k])]
        picked = rng.sample(combos, min(n, total))
    else:
        picked, seen, tries = [], set(), 0
        while len(picked) < n and tries < 50 * n + 1000:
            tries += 1
            cand = {k: P.sample(template.params[k], rng) for k in names}
            key = P.canonical(encode(template, cand))
            if key not in seen:
                seen.add(key)
                picked.append(cand)
    if len(picked) >= n:
        return picked, None
    how = f"holds only {total} distinct values" if total is not None else f"gave only {len(picked)} distinct values"
    return picked, f"the parameter domain {how}; {n} instances were asked for, {len(picked)} drawn"


def encode(template: Template, values: dict[str, Any]) -> dict[str, Any]:
    return {k: P.encode(template.params[k], values[k]) for k in template.params}


def _reject(template: Template, stage: str, reason: str, params_json: dict | None = None) -> dict:
    return {"template_id": template.template_id,
            "instance_id": instance_id(template.template_id, params_json) if params_json is not None else None,
            "params_used": params_json, "stage": stage, "reason": " ".join(reason.split())[:1000]}  # fmt: skip


@dataclass
class _Candidate:
    values: dict[str, Any]
    params_json: dict[str, Any]
    problem: str = ""
    solution: str = ""


def _prepare(template: Template, n: int, seed: int, rejections: list[dict], notes: set[str]) -> list[_Candidate]:
    """Drawn, domain-checked, rule-checked and rendered candidates; the others become rejections."""
    drawn, shortage = draw(template, n, seed)
    if shortage:
        rejections.append(_reject(template, "duplicate", shortage))
    kept = []
    for values in drawn:
        pj = encode(template, values)
        bad = [k for k in template.params if not P.contains(template.params[k], values[k])]
        if bad:
            rejections.append(_reject(template, "params", f"{', '.join(bad)} outside the declared domain", pj))
            continue
        rule = check_param_rules(template, values, notes)
        if rule:
            rejections.append(_reject(template, "params", f"param_check rule failed: {rule}", pj))
            continue
        texts = {k: P.text(v) for k, v in values.items()}
        problem, why = render_problem(template.problem_template, texts)
        solution, why_solution = render_solution(template.natural_lang_solution, texts)
        if why or why_solution:
            rejections.append(_reject(template, "render", why or why_solution or "", pj))
            continue
        kept.append(_Candidate(values, pj, problem, solution))
    return kept


def _instance(template: Template, c: _Candidate, line: dict, seed: int, out: JobOutcome, libs: dict) -> dict:
    scc = template.small_case_check
    return {
        "instance_id": instance_id(template.template_id, c.params_json), "template_id": template.template_id,
        "problem": c.problem, "solution_steps": c.solution, "numerical_value": line["value"],
        "exact_expression": line.get("exact_expression") or "", "params_used": c.params_json,
        "answer_kind": template.answer_kind, "msc": list(template.msc), "paper_id": template.paper_id,
        "theorem": template.theorem, "template_version": template.version, "code_hash": template.code_hash,
        "seed": seed, "execution": {"status": "ok", "isolation": list(out.sandbox.isolation),
                                    "wall_s": line.get("wall_s"), "cpu_s": line.get("cpu_s")},
        "libraries": libs, "cross_check": {"cases": len(scc.cases)} if scc is not None else None,
    }  # fmt: skip


def _judge(template: Template, kept: list[_Candidate], out: JobOutcome, seed: int, libs: dict,
           rejections: list[dict], notes: set[str]) -> list[dict]:  # fmt: skip
    instances: list[dict] = []
    answers: dict[str, str] = {}
    sb = out.sandbox
    for i, c in enumerate(kept):
        line = out.instances.get(i)
        if line is None:
            when = "while this instance ran" if i in out.started else "before this instance ran"
            if sb.ok:  # the process ended early without being stopped: the code ended it (os._exit, ...)
                why = f"the sandboxed process ended without a result ({when})"
            else:
                why = f"sandbox {sb.status}: {sb.reason} ({when})"
            rejections.append(_reject(template, "execution", why, c.params_json))
            continue
        status = line.get("status")
        if status == "timeout":
            rejections.append(_reject(template, "execution", f"timed out: {line.get('error')}", c.params_json))
        elif status == "nondeterministic":
            why = f"nondeterministic: two runs gave {line.get('first')} and then {line.get('second')}"
            rejections.append(_reject(template, "determinism", why, c.params_json))
        elif status != "ok":
            rejections.append(_reject(template, "execution", str(line.get("error")), c.params_json))
        elif why := judge_value(template, c.values, line, notes):
            rejections.append(_reject(template, "value_rule", why, c.params_json))
        elif line["value"] in answers:
            why = f"same answer as {answers[line['value']]}"
            rejections.append(_reject(template, "duplicate", why, c.params_json))
        else:
            inst = _instance(template, c, line, seed, out, libs)
            answers[line["value"]] = inst["instance_id"]
            instances.append(inst)
    return instances


def instantiate_templates(templates: list[Template], n: int, seed: int, *, timeout_s: float = 120,
                          memory_mb: int = 2048, per_instance_s: float = 20,
                          progress: Callable[[int, int, str], None] | None = None) -> InstantiateResult:  # fmt: skip
    """Steps e and g for parsed templates: ``n`` instances each (fewer when some are rejected).

    ``timeout_s`` and ``memory_mb`` limit each template's sandboxed process, ``per_instance_s``
    each run of the code inside it. ``progress(done, total, template_id)`` follows the templates.
    """
    if n < 1:
        raise UserError(f"--n must be at least 1, got {n}")
    if timeout_s <= 0 or per_instance_s <= 0:
        raise UserError("time limits must be positive")
    if memory_mb < 64:
        raise UserError(f"--memory must be at least 64 MB, got {memory_mb}")
    if len({t.template_id for t in templates}) != len(templates):
        raise UserError("two templates share a template_id")
    t0 = time.perf_counter()
    result = InstantiateResult()
    libs: dict[str, Any] | None = None
    per_template = []
    for k, template in enumerate(templates):
        notes = set(rule_notes(template))
        rejections: list[dict] = []
        kept = _prepare(template, n, seed, rejections, notes)
        row: dict[str, Any] = {"template_id": template.template_id, "candidates": len(kept), "instances": 0,
                               "cross_check": "none" if template.small_case_check is None else "not run"}  # fmt: skip
        if kept:
            libs = libs or libraries()  # once per run, before the first template that runs
            t1 = time.perf_counter()
            out = run_job(template, [c.values for c in kept], timeout_s=timeout_s, memory_mb=memory_mb,
                          per_instance_s=per_instance_s)  # fmt: skip
            row.update(sandbox=out.sandbox.status, wall_s=round(time.perf_counter() - t1, 3))
            result.isolation = result.isolation or list(out.sandbox.isolation)
            failure = cross_check_failure(template, out)
            if failure:
                rejections.append(_reject(template, "cross_check", failure))
                row["cross_check"] = "disagree"
            else:
                if template.small_case_check is not None:
                    row["cross_check"] = f"agree ({len(template.small_case_check.cases)} cases)"
                found = _judge(template, kept, out, seed, libs, rejections, notes)
                result.instances += found
                row["instances"] = len(found)
                if found:
                    result.validated_templates.append(template.template_id)
        row["rejected"] = dict(Counter(r["stage"] for r in rejections))
        row["notes"] = sorted(notes)
        per_template.append(row)
        result.rejections += rejections
        if progress:
            progress(k + 1, len(templates), template.template_id)
    wall = time.perf_counter() - t0
    result.isolation = result.isolation or list(probe().layers)
    result.summary = {
        "templates": len(templates), "validated_templates": len(result.validated_templates),
        "instances": len(result.instances), "rejections": len(result.rejections),
        "rejections_by_stage": {s: c for s in STAGES if (c := sum(r["stage"] == s for r in result.rejections))},
        "n_per_template": n, "seed": seed,
        "limits": {"timeout_s": timeout_s, "memory_mb": memory_mb, "per_instance_s": per_instance_s},
        "wall_s": round(wall, 3), "instances_per_s": round(len(result.instances) / wall, 3) if wall > 0 else None,
        "isolation": result.isolation, "libraries": libs or {}, "per_template": per_template,
    }  # fmt: skip
    return result


def write_outputs(result: InstantiateResult, out_dir: str | Path) -> dict[str, Path]:
    """``instances.jsonl``, ``rejections.jsonl`` and ``summary.json`` in ``out_dir``."""
    out_dir = Path(out_dir)
    return {"instances": write_jsonl(out_dir / "instances.jsonl", result.instances),
            "rejections": write_jsonl(out_dir / "rejections.jsonl", result.rejections),
            "summary": write_json(out_dir / "summary.json", result.summary)}  # fmt: skip
