"""The scripted EternalMath build: replies to the computability, template and validity prompts, and the seven test
papers (shared by the build and sandbox-refusal tests)."""

from __future__ import annotations

import json
from pathlib import Path

from theorembench.pipeline.papers import add_local
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

GEN, JUDGE = "openai-api/fake/gen", "openai-api/fake/judge"
BASE = {"filter.reference_date": "2026-01-15", "translation.enabled": False}

# -- scripted replies ---------------------------------------------------------------------------

DERANGE_TEXT = ("ALPHA-ONE: A permutation of a finite set is called fixed-point-free when it moves every element. "
                "How many fixed-point-free permutations of the set $\\{{1, 2, \\dots, {{{p}}}\\}}$ "
                "are there?")  # fmt: skip
CODE = "import math\nresult = sum((-1)**k * (math.factorial({v}) // math.factorial(k)) for k in range({v} + 1))"
CHECK = ("from itertools import permutations\n"
         "result = sum(1 for q in permutations(range({v})) if all(q[i] != i for i in range({v})))")  # fmt: skip
DERANGE_CODE, DERANGE_CHECK = CODE.format(v="n"), CHECK.format(v="n")


def derange(tid: str, name: str = "n") -> dict:
    return {
        "template_id": tid, "target_paper_module": "Theorem 1", "core_math_concept": "fixed points",
        "problem_template": DERANGE_TEXT.format(p=name), "output_type": "Integer",
        "natural_lang_solution": "Inclusion-exclusion over the set of fixed points gives the count.",
        "validation_rule": [{"type": "value_check", "rule": "result > 0"}],
        "formal_solution": CODE.format(v=name), "params": {name: {"type": "int", "min": 4, "max": 12}},
        "small_case_check": {"params": {name: [4, 5, 6]}, "code": CHECK.format(v=name)},
    }  # fmt: skip


SUBSETS_WRONG = {  # the formula forgets the empty set: it runs, is positive, and is wrong
    "template_id": "subsets", "problem_template": "ALPHA-TWO: How many subsets does a set with exactly {n} elements "
    "have, the empty set included?", "output_type": "Integer", "formal_solution": "result = 2**n - 1",
    "natural_lang_solution": "Each element is in or out of a subset.", "validation_rule": [],
    "params": {"n": {"type": "int", "min": 3, "max": 20}},
    "small_case_check": {"params": {"n": [3, 4, 5]}, "code": "from itertools import combinations\n"
                         "result = sum(1 for k in range(n + 1) for _ in combinations(range(n), k))"},
}  # fmt: skip
GENERATORS = {  # phi(p) for primes: distinct answers, a sound template the validity judge will reject
    "template_id": "units", "problem_template": "GAMMA-ONE: Let $G$ be the cyclic group of order {n}. How many "
    "elements generate $G$?", "output_type": "Integer", "formal_solution": "result = n - 1",
    "natural_lang_solution": "The generators are the residues prime to the order.", "validation_rule": [],
    "params": {"n": {"type": "prime", "min": 5, "max": 13}},
    "small_case_check": {"params": {"n": [5, 7]}, "code": "import math\n"
                         "result = sum(1 for g in range(n) if math.gcd(g, n) == 1)"},
}  # fmt: skip


def j(obj) -> str:
    return json.dumps(obj)


def computable(yes: bool) -> str:
    results = [{"statement": "an explicit count", "parameters": [{"name": "n", "domain": "n >= 4"}],
                "output": "an integer", "kind": "exact value"}] if yes else []  # fmt: skip
    return j({"computable": yes, "reason": "explicit counts" if yes else "only existence results", "results": results})


def validity_verdict(valid: bool) -> str:
    return j({"self_contained": True, "unambiguous": valid, "unique_answer": True, "faithful": True, "valid": valid,
              "reason": "clear" if valid else "the identity element is not named"})  # fmt: skip


COMP = "Decide the computability of the paper below"
TEMPL = r"Write up to \d+ distinct meta-templates"
VALID = r"Review these \d+ instances of one parameterised template"


def rules(**extra) -> list[dict]:
    out = [
        {"match": f"(?s){COMP}.*PAPER-ALPHA", "reply": computable(True), **extra.get("comp_alpha", {})},
        {"match": f"(?s){COMP}.*PAPER-BETA", "reply": computable(False)},
        {"match": f"(?s){COMP}.*PAPER-GAMMA", "reply": computable(True)},
        {"match": f"(?s){COMP}.*PAPER-THETA", "reply": computable(True)},
        {"match": "(?s)MSC2020 top-level classes:.*PAPER-GAMMA",
         "reply": j({"codes": ["99", "20C30", "20"], "reason": "cyclic groups"})},
        {"match": f"(?s){TEMPL}.*PAPER-ALPHA",
         "reply": extra.get("alpha_templates", j({"templates": [derange("a1"), SUBSETS_WRONG, derange("a3", "m")]}))},
        {"match": f"(?s){TEMPL}.*PAPER-GAMMA", "reply": j({"templates": [GENERATORS]})},
        {"match": f"(?s){TEMPL}.*PAPER-THETA", "reply": j({"templates": [dict(derange("t1"), core_math_concept=(
            "LOWCONF " * 3).strip(), problem_template="THETA-ONE: " + DERANGE_TEXT.format(p="n")[10:])]})},
        {"match": f"(?s){VALID}.*ALPHA-ONE", "reply": validity_verdict(True)},
        {"match": f"(?s){VALID}.*THETA-ONE", "reply": validity_verdict(True)},
        {"match": f"(?s){VALID}.*GAMMA-ONE", "reply": validity_verdict(False)},
    ]  # fmt: skip
    return extra.get("before", []) + out


def latex(title: str, subjclass: str | None) -> str:
    sc = f"\\subjclass[2020]{{{subjclass}}}\n" if subjclass else ""
    return (f"\\documentclass{{amsart}}\n\\newtheorem{{theorem}}{{Theorem}}\n\\begin{{document}}\n"
            f"\\title{{{title}}}\n{sc}\\maketitle\n\\begin{{theorem}}\\label{{thm:main}}\n"
            f"For every $n \\ge 1$ the count is explicit.\n\\end{{theorem}}\n\\end{{document}}\n")  # fmt: skip


def paper_folder(root: Path, name: str, subjclass: str | None) -> Path:
    folder = root / "src" / name.lower()
    folder.mkdir(parents=True)
    (folder / "main.tex").write_text(latex(f"PAPER-{name}", subjclass))
    return folder


def add_papers(store: Store, root: Path, names: tuple[str, ...]) -> dict[str, str]:
    """The seven test papers (or some of them), in the store; returns name -> paper id."""
    repo = PaperRepo(store)
    ids = {}
    local = {"BETA": "Primary 11N05; Secondary 11A41", "GAMMA": None, "DELTA": "Primary 97D40; Secondary 05A05",
             "ETA": "35Q30", "THETA": "05A05"}  # fmt: skip
    for name in names:
        if name == "ALPHA":  # an arXiv paper with a journal reference, recent
            folder = paper_folder(root, name, "Primary 05A05; Secondary 05A15")
            repo.upsert("2506.00001v1", source="arxiv", arxiv_id="2506.00001", version=1, month="2025-06",
                        published="2025-06-02T10:00:00Z", title="PAPER-ALPHA", status="unpacked", folder=str(folder),
                        meta={"journal_ref": "J. Combin. Theory Ser. A 201 (2025)", "doi": None})  # fmt: skip
            ids[name] = "2506.00001v1"
        elif name == "EPSILON":  # published long before the window
            repo.upsert("1901.00002v1", source="arxiv", arxiv_id="1901.00002", version=1, month="2019-01",
                        published="2019-01-10T00:00:00Z", title="PAPER-EPSILON", status="unpacked",
                        meta={"journal_ref": "Ann. of Math. 190 (2019)"})  # fmt: skip
            ids[name] = "1901.00002v1"
        elif name == "ZETA":  # recent, but no journal-ref or DOI
            repo.upsert("2510.00003v1", source="arxiv", arxiv_id="2510.00003", version=1, month="2025-10",
                        published="2025-10-01T00:00:00Z", title="PAPER-ZETA", status="unpacked", meta={})  # fmt: skip
            ids[name] = "2510.00003v1"
        else:
            ids[name] = add_local(repo, paper_folder(root, name, local[name]))
    return ids
