"""Steps e and g: instantiate templates with seeded parameters, run them in the sandbox, keep what passes.

For each template: draw ``n`` distinct parameter sets (``random.Random(f"{seed}:{template_id}")``;
a domain with fewer values gives all of them, and a rejection says so), check each against its
domain and the ``param_check`` rules, render the problem and the solution (rejecting unresolved
placeholders and parameter names left in the problem), then run the template's code in separate
sandboxed processes that return values as data (:mod:`verify`, :mod:`runs`): a template whose
formula does not agree with its brute force is rejected as a whole. Every check runs here on the
host, on what those processes returned: execution, determinism across two processes, precision
(floats), the value rules, and grading (the answer's own LaTeX must be graded correct by the answer
checker); then instances are deduplicated on their answers, and each kept one carries its provenance.
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

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.outputs import write_json, write_jsonl
from theorembench.methods.eternal import params as P
from theorembench.methods.eternal import values as V
from theorembench.methods.eternal.crosscheck import CHECK_BUDGET_S
from theorembench.methods.eternal.grading import Checker, grading_failure
from theorembench.methods.eternal.render import render_problem, render_solution
from theorembench.methods.eternal.runs import Run
from theorembench.methods.eternal.template import Template
from theorembench.methods.eternal.validate import check_param_rules, judge_value, rule_notes
from theorembench.methods.eternal.verify import Verification, double_shaped, verify
from theorembench.sandbox import tool_manifest
from theorembench.sandbox.providers import Sandbox, open_sandbox
from theorembench.sandbox.tools import packages_in

STAGES = ("template", "params", "execution", "time_limit", "determinism", "precision", "value_rule", "cross_check",
          "grading", "render", "duplicate")  # fmt: skip


@dataclass
class InstantiateResult:
    """Instances and rejections (dicts, one JSONL line each), the ids of validated templates, the summary."""

    instances: list[dict] = field(default_factory=list)
    rejections: list[dict] = field(default_factory=list)
    validated_templates: list[str] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    isolation: list[str] = field(default_factory=list)


def libraries(box: Sandbox | None = None) -> dict[str, Any]:
    """Python and the packages importable inside the sandbox (``box``; None: the theorembench sandbox), with
    versions (one sandboxed run)."""
    if box is None or box.kind == "theorembench":
        return {"python": platform.python_version(), **tool_manifest()["python"]}
    return packages_in(box)


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


def _instance(template: Template, c: _Candidate, run: Run, seed: int, v: Verification, libs: dict) -> dict:
    scc = template.small_case_check
    check = {"cases": len(scc.cases), "larger": len(v.larger), "largest": v.larger[-1] if v.larger else None} \
        if scc is not None else None  # fmt: skip
    formula = v.roles["formula"].sandbox
    return {
        "instance_id": instance_id(template.template_id, c.params_json), "template_id": template.template_id,
        "problem": c.problem, "solution_steps": c.solution, "numerical_value": V.text(run.value),
        "exact_expression": run.exact_expression, "params_used": c.params_json,
        "answer_kind": template.answer_kind, "msc": list(template.msc), "paper_id": template.paper_id,
        "theorem": template.theorem, "template_version": template.version, "code_hash": template.code_hash,
        "seed": seed, "execution": {"status": "ok", "isolation": list(formula.isolation), "wall_s": run.wall_s,
                                    "cpu_s": run.cpu_s, "hash_seeds": list(v.seeds)},
        "libraries": libs, "cross_check": check, "verified": template.verified,
        **({"academic_level": template.raw["academic_level"]} if template.raw.get("academic_level") else {}),
    }  # fmt: skip


def _keep(template: Template, kept: list[_Candidate], v: Verification, seed: int, libs: dict, checker: Checker,
          rejections: list[dict], notes: set[str]) -> list[dict]:  # fmt: skip
    """The candidates that pass every check, as instances; the others as rejections (in candidate order)."""
    passed: list[tuple[_Candidate, Run]] = []
    for c, outcome in zip(kept, v.outcomes):
        if isinstance(outcome, tuple):
            rejections.append(_reject(template, *outcome, c.params_json))
        elif why := judge_value(template, c.values, outcome.value, notes):
            rejections.append(_reject(template, "value_rule", why, c.params_json))
        else:
            passed.append((c, outcome))
    if why := double_shaped(template, [r for _, r in passed]):
        rejections += [_reject(template, "precision", why, c.params_json) for c, _ in passed]
        return []
    instances: list[dict] = []
    answers: dict[str, str] = {}
    for c, run in passed:
        answer = V.text(run.value)
        if why := grading_failure(run.value, template.answer_kind, checker):
            rejections.append(_reject(template, "grading", why, c.params_json))
        elif answer in answers:
            rejections.append(_reject(template, "duplicate", f"same answer as {answers[answer]}", c.params_json))
        else:
            inst = _instance(template, c, run, seed, v, libs)
            answers[answer] = inst["instance_id"]
            instances.append(inst)
    return instances


def _cross_check_row(template: Template, v: Verification) -> str:
    scc = template.small_case_check
    if scc is None:
        return "none"
    if v.failure:
        return "disagree"
    more = f", and {len(v.larger)} larger up to {_show(v.larger[-1])}" if v.larger else ""
    return f"agree ({len(scc.cases)} cases{more})"


def _show(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _one(template: Template, n: int, seed: int, result: InstantiateResult, libs: dict, checker: Checker,
         limits: dict[str, Any], box: Sandbox) -> dict[str, Any]:  # fmt: skip
    """One template: its candidates, runs and checks; adds to ``result`` and returns its summary row."""
    notes = set(rule_notes(template)) | set(template.notes)
    if not template.verified:
        notes.add("unverified: no small_case_check, so nothing independent checks formal_solution (a release "
                  "leaves these instances out unless told to keep them)")  # fmt: skip
    rejections: list[dict] = []
    kept = _prepare(template, n, seed, rejections, notes)
    row: dict[str, Any] = {"template_id": template.template_id, "candidates": len(kept), "instances": 0,
                           "verified": template.verified,
                           "cross_check": "none" if template.small_case_check is None else "not run"}  # fmt: skip
    if kept:
        checker.warm()
        if not libs:  # once per run, before the first template that runs
            libs.update(libraries(box))
        t1 = time.perf_counter()
        v = verify(template, [c.values for c in kept], seed, checker, notes, box=box, **limits)
        row.update(sandbox={role: out.sandbox.status for role, out in v.roles.items()},
                   wall_s=round(time.perf_counter() - t1, 3), cross_check=_cross_check_row(template, v))  # fmt: skip
        result.isolation = result.isolation or list(v.roles["formula"].sandbox.isolation)
        if v.failure:
            rejections.append(_reject(template, "cross_check", v.failure))
        else:
            found = _keep(template, kept, v, seed, libs, checker, rejections, notes)
            result.instances += found
            row["instances"] = len(found)
            if found:
                result.validated_templates.append(template.template_id)
    row["rejected"] = dict(Counter(r["stage"] for r in rejections))
    row["notes"] = sorted(notes)
    result.rejections += rejections
    return row


def instantiate_templates(templates: list[Template], n: int, seed: int, *, timeout_s: float = 120,
                          memory_mb: int = 2048, per_instance_s: float = 20, check_budget_s: float = CHECK_BUDGET_S,
                          progress: Callable[[int, int, str], None] | None = None,
                          sandbox: str | None = None) -> InstantiateResult:  # fmt: skip
    """Steps e and g for parsed templates: ``n`` instances each (fewer when some are rejected).

    ``memory_mb`` limits each of a template's sandboxed processes (brute force, formula, replay) and
    ``per_instance_s`` each run of the code inside them; a process may take ``timeout_s`` plus
    ``per_instance_s`` for each of its runs (it grows with ``n``: ``verify.role_limit``); ``check_budget_s`` is
    the time the brute force may spend on cases larger than the declared small cases.
    ``progress(done, total, template_id)`` follows the templates. ``sandbox`` (theorembench, the default; docker;
    k8s) runs the code (:func:`theorembench.sandbox.providers.open_sandbox`).
    """
    if n < 1:
        raise InvalidSetting("n", f"must be at least 1, got {n}")
    if timeout_s <= 0 or per_instance_s <= 0 or check_budget_s < 0:
        raise UserError("time limits must be positive")
    if memory_mb < 64:
        raise InvalidSetting("memory_mb", f"must be at least 64 MB, got {memory_mb}")
    if len({t.template_id for t in templates}) != len(templates):
        raise UserError("two templates share a template_id")
    t0 = time.perf_counter()
    result = InstantiateResult()
    libs: dict[str, Any] = {}
    limits = {"timeout_s": timeout_s, "memory_mb": memory_mb, "per_instance_s": per_instance_s,
              "check_budget_s": check_budget_s}  # fmt: skip
    per_template = []
    with Checker() as checker, open_sandbox(sandbox, memory_mb=memory_mb,
                                            purpose="EternalMath validation of the templates' code") as box:
        for k, template in enumerate(templates):
            per_template.append(_one(template, n, seed, result, libs, checker, limits, box))
            if progress:
                progress(k + 1, len(templates), template.template_id)
        result.isolation = result.isolation or list(box.layers)
    wall = time.perf_counter() - t0
    result.summary = {
        "templates": len(templates), "validated_templates": len(result.validated_templates),
        "instances": len(result.instances), "rejections": len(result.rejections),
        "unverified_instances": sum(not i["verified"] for i in result.instances),
        "rejections_by_stage": {s: c for s in STAGES if (c := sum(r["stage"] == s for r in result.rejections))},
        "n_per_template": n, "seed": seed,
        "limits": {"timeout_s": timeout_s, "memory_mb": memory_mb, "per_instance_s": per_instance_s},
        "check_budget_s": check_budget_s,
        "wall_s": round(wall, 3), "instances_per_s": round(len(result.instances) / wall, 3) if wall > 0 else None,
        "isolation": result.isolation, "libraries": libs, "per_template": per_template,
    }  # fmt: skip
    return result


def write_outputs(result: InstantiateResult, out_dir: str | Path, *, keep_unverified: bool = False) -> dict[str, Path]:
    """``instances.jsonl``, ``rejections.jsonl`` and ``summary.json`` in ``out_dir``. Instances of unverified
    templates (no small_case_check) go to ``unverified.jsonl`` instead, unless ``keep_unverified``."""
    out_dir = Path(out_dir)
    released = [i for i in result.instances if keep_unverified or i.get("verified", True)]
    held = [i for i in result.instances if not (keep_unverified or i.get("verified", True))]
    files = {"instances": write_jsonl(out_dir / "instances.jsonl", released),
             "rejections": write_jsonl(out_dir / "rejections.jsonl", result.rejections),
             "summary": write_json(out_dir / "summary.json", dict(result.summary, released=len(released),
                                                                  unverified_left_out=len(held)))}  # fmt: skip
    if held:
        files["unverified"] = write_jsonl(out_dir / "unverified.jsonl", held)
    return files
