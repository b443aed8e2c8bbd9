"""``theorembench store runs``: every method's evaluation records its headline score (one estimate shape) and cost."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.cli.common import out
from theorembench.llm import LLM, GenerateSettings
from theorembench.methods.eternal.evaluate import evaluate_eternal
from theorembench.methods.hybrid.evaluate import evaluate_generation
from theorembench.store import Store

RIGHT, WRONG = "So the value is \\boxed{12}.", "So the value is \\boxed{13}."
cli = CliRunner()


def _wilson_by_hand(k: int, n: int) -> list[float]:
    z, p = 1.96, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def _instance(iid: str) -> dict:
    return {"template_id": "t_demo", "instance_id": f"t_demo#{iid}", "problem": f"PROBLEM-{iid}: compute the value.",
            "solution_steps": "The value is 12.", "numerical_value": "12", "exact_expression": "",
            "params_used": {"n": 3}, "answer_kind": "integer", "msc": ["05"], "paper_id": None, "theorem": None,
            "template_version": 1, "code_hash": "0" * 64, "seed": 1, "tier": "hard", "n_models_correct": 0,
            "suite_size": 5, "execution": {"status": "ok", "isolation": [], "wall_s": 0.01, "cpu_s": 0.01},
            "libraries": {}}  # fmt: skip


def _question(i: int) -> dict:
    items = [{"number": k, "text": f"Q{i} claim {k}.", "correct": k in (1, 2)} for k in range(1, 5)]
    return {"id": f"q{i}", "items": items, "m": 2, "n": 4, "answer": [1, 2]}


async def _hybrid(store: Store) -> None:
    llm = LLM(store)
    try:
        await evaluate_generation(store, llm, "openai-api/fake/hy", [_question(i) for i in range(3)],
                                  settings=GenerateSettings(max_retries=0), log_dir=None, name="unit")  # fmt: skip
    finally:
        await llm.aclose()


def test_store_runs_shows_each_methods_score_interval_n_errors_and_cost(fake_env, tmp_path, monkeypatch):
    home = Path(tmp_path / "home")
    home.mkdir(parents=True, exist_ok=True)
    (home / "prices.toml").write_text('[models]\n"*fake*" = { input = 1000.0, output = 2000.0 }\n')
    fake_env.set_script({"default": {"reply": WRONG}, "rules": [
        {"match": "PROBLEM-A:", "reply": RIGHT},
        {"match": "PROBLEM-B:", "reply": WRONG},
        {"match": "PROBLEM-C:", "reply": RIGHT, "faults": [{"kind": "400", "times": 50}]},
        {"match": "Q0 claim 1", "reply": "\\boxed{1, 2}"},
        {"match": "Q1 claim 1", "reply": "\\boxed{1, 3}"},
        {"match": "Q2 claim 1", "reply": "\\boxed{1, 2}", "faults": [{"kind": "429", "times": 50}]},
    ]})  # fmt: skip
    src = tmp_path / "inst.jsonl"
    src.write_text("".join(json.dumps(_instance(i)) + "\n" for i in "ABC"))
    db = tmp_path / "runs.db"
    with Store(db) as store:
        evaluate_eternal(store, src, "openai-api/fake/ev", out_dir=tmp_path / "ev", write_log=False, max_retries=0)
        asyncio.run(_hybrid(store))

    res = cli.invoke(app, ["store", "runs", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["kind"]: r for r in json.loads(res.output)}
    assert set(rows) == {"eternal.eval", "eval.hybrid"}
    # EternalMath: A right, B wrong, C refused (a 400): 1 of 3, one error, counted in n
    eternal = rows["eternal.eval"]["score"]
    assert (eternal["value"], eternal["n"], eternal["errors"], eternal["method"]) == (0.3333, 3, 1, "wilson")
    assert eternal["ci95"] == pytest.approx(_wilson_by_hand(1, 3), abs=2e-4)
    # Proof2Hybrid, tight: q0 exact, q1 half right, q2 failed after its retries: 1 of 3, one error
    hybrid = rows["eval.hybrid"]["score"]
    assert (hybrid["value"], hybrid["n"], hybrid["errors"], hybrid["method"]) == (0.3333, 3, 1, "wilson")
    assert hybrid["ci95"] == pytest.approx(_wilson_by_hand(1, 3), abs=2e-4)
    for kind in rows:  # priced by the user's price file: two answered calls each
        assert rows[kind]["cost_usd"] is not None and rows[kind]["cost_usd"] > 0

    monkeypatch.setattr(out, "_width", 250)  # one line per run, so each row can be read whole
    res = cli.invoke(app, ["store", "runs", "--db", str(db)])
    assert res.exit_code == 0, res.output
    lines = {kind: next(line for line in res.output.splitlines() if kind in line) for kind in rows}
    low, high = (100 * x for x in _wilson_by_hand(1, 3))
    for kind, line in lines.items():
        cells = [c.strip() for c in line.split("│")]
        shown = [re.fullmatch(r"33\.3% \[(\d+\.\d)–(\d+\.\d)\] n=3", c) for c in cells]
        found = [m for m in shown if m]
        assert len(found) == 1, line  # the score with its 95% interval and n
        assert (float(found[0][1]), float(found[0][2])) == pytest.approx((low, high), abs=0.06)
        assert cells[cells.index(found[0][0]) + 1:][:2] == ["1", "wilson"]  # errors, how the interval was made
        assert f"${rows[kind]['cost_usd']:.4f}" in cells  # cost
