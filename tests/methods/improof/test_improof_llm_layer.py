"""IMProofBench's model calls go through theorembench's LLM layer: the usage ledger, prices, cache and retries.

A scripted fake server over real HTTP, real Inspect AI, the real sandbox and store; the model is priced by a
user price file, so every expected cost below is worked out from the scripted token counts and those prices.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from helpers.improof import store  # noqa: F401 - a fixture
from helpers.improof_samples import submit

from theorembench.methods.improof.harness import run_improof_eval
from theorembench.testing.fakellm import prompt_text

MODEL = "openai-api/fake/m"
INPUT_PRICE, OUTPUT_PRICE = 2.0, 10.0  # dollars per million tokens
SCRIPT = {"rules": [
    {"match": "SUB-TWO", "reply": submit("100"), "usage": {"prompt_tokens": 10, "completion_tokens": 7}},
    {"match": "SUB-ONE", "reply": submit("9"), "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    {"match": "MAIN-Q", "usage": {"prompt_tokens": 10, "completion_tokens": 60}, "reply": [
        {"tool_calls": [{"name": "python", "arguments": {"code": "print(6 * 7)"}}]}, submit("proof")]},
]}  # fmt: skip


def cost(prompt: int, completion: int) -> float:
    return (prompt * INPUT_PRICE + completion * OUTPUT_PRICE) / 1e6


@pytest.fixture(autouse=True)
def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user price file for the fake models; autouse, so it is in place before the store (helpers/improof.py) opens."""
    prices = tmp_path / "prices.toml"
    prices.write_text(f'[models]\n"openai-api/fake/*" = {{ input = {INPUT_PRICE}, output = {OUTPUT_PRICE} }}\n')
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(prices))


def run(store, tmp_path: Path, **kw):
    kw.setdefault("tools", ("python",))
    return run_improof_eval(store, MODEL, main_tokens=1000, sub_tokens=500, tool_timeout_s=60, tool_memory_mb=1024,
                            out_dir=tmp_path / "out", log_dir=tmp_path / "logs", **kw)  # fmt: skip


COLUMNS = ("purpose", "status", "model", "attempts", "prompt_tokens", "completion_tokens", "cost_usd")


def ledger(store, run_id: str) -> list[dict]:
    """The run's rows in the usage ledger, oldest first."""
    rows = store.fetch(sa.text(f"SELECT {', '.join(COLUMNS)} FROM model_calls WHERE run_id = :run ORDER BY id"),
                       {"run": run_id})  # fmt: skip
    return [{c: r[c] for c in COLUMNS} for r in rows]


def inspect_cost(log: Path) -> float | None:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(log)).stats.model_usage[f"theorembench/{MODEL}"].total_cost


def test_calls_are_ledgered_priced_counted_by_store_usage_and_cached(store, fake_env, tmp_path: Path, capsys,
                                                                    monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    from typer.testing import CliRunner

    from theorembench.cli import app
    from theorembench.cli.improof_eval import print_results

    monkeypatch.setenv("COLUMNS", "200")  # report lines and table rows on one line each
    fake_env.set_script(SCRIPT)
    first = run(store, tmp_path)
    assert len(fake_env.requests) == 4
    assert [t["name"] for t in fake_env.requests[0]["tools"]] == ["python", "submit"]  # tool definitions went out
    assert "42" in prompt_text(fake_env.requests[1]["body"])  # the tool call came back, ran, and its result went out
    rows = ledger(store, first.run_id)
    assert [tuple(r[c] for c in COLUMNS[:6]) for r in rows] == [("improof.eval.agentic", "ok", MODEL, 1, 10, n)
                                                                for n in (60, 60, 5, 7)]  # fmt: skip
    costs = [cost(10, 60), cost(10, 60), cost(10, 5), cost(10, 7)]
    assert [r["cost_usd"] for r in rows] == pytest.approx(costs)
    calls = first.results["usage"]["model_calls"]
    assert (calls["calls"], calls["cached"], calls["failed"]) == (4, 0, 0)
    assert calls["cost_usd"] == pytest.approx(sum(costs))
    saved = json.loads(first.path.read_text())["usage"]["model_calls"]
    assert saved["cost_usd"] == pytest.approx(sum(costs)) and saved["calls"] == 4
    assert first.results["summary"]["cost_usd"] == pytest.approx(sum(costs))  # the headline cost is what was paid
    assert first.log is not None and inspect_cost(first.log) == pytest.approx(sum(costs))  # the Inspect log's cost
    capsys.readouterr()
    print_results(first.results)  # the report of `improof eval`
    assert f"model calls of the run: 4 paid, ${sum(costs):.4f}; 0 answered from the cache" in capsys.readouterr().out

    res = CliRunner().invoke(app, ["store", "usage"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    [row] = [[c.strip() for c in line.split("│")[1:-1]] for line in res.output.splitlines() if MODEL in line]
    assert row[:4] == [MODEL, "openai-api", "4", "4"] and row[-1] == f"${sum(costs):.4f}"
    # `store runs` shows the run's headline (all points of the one problem: Wilson at 1.0, n = 1) and its cost
    res = CliRunner().invoke(app, ["store", "runs", "--json"], catch_exceptions=False)
    [listed] = [r for r in json.loads(res.output) if r["id"] == first.run_id]
    assert listed["kind"] == "improof.eval" and listed["cost_usd"] == pytest.approx(sum(costs))
    assert listed["score"] == {"value": 1.0, "ci95": [0.2065, 1.0], "n": 1, "errors": 0, "method": "wilson-mean"}

    # another harness setting (the turn cap) names another pipeline, so nothing is replayed from the stored
    # turns; every request is the same as before and the LLM layer's cache answers it
    second = run(store, tmp_path, max_turns=150)
    assert second.run_id != first.run_id and len(fake_env.requests) == 4
    epoch = second.results["problems"][0]["epochs"][0]
    assert (epoch["turns_replayed"], epoch["turns_live"]) == (0, 4) and epoch["weighted_score"] == 1.0
    assert [s["outcome"] for s in epoch["stages"]] == ["submitted"] * 3
    calls = second.results["usage"]["model_calls"]
    assert (calls["calls"], calls["cached"], calls["cost_usd"]) == (0, 4, 0.0) and ledger(store, second.run_id) == []
    assert second.log is not None and inspect_cost(second.log) == 0.0  # an answer from the cache costs nothing
    print_results(second.results)
    assert "model calls of the run: 0 paid, $0.0000; 4 answered from the cache" in capsys.readouterr().out


def test_transient_failures_are_retried_and_a_refused_request_ends_its_stage(store, fake_env, tmp_path: Path):
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "faults": [{"kind": "400", "times": 99, "message": "prompt is too long"}]},
        {"match": "SUB-ONE", "reply": submit("9"), "usage": {"prompt_tokens": 10, "completion_tokens": 5},
         "faults": [{"kind": "500", "times": 1}]},
        {"match": "MAIN-Q", "reply": submit("proof"), "usage": {"prompt_tokens": 10, "completion_tokens": 60}},
    ]})  # fmt: skip
    result = run(store, tmp_path, tools=(), max_retries=2)
    assert [r["rule"] for r in fake_env.requests] == [2, 1, 1, 0]  # the 500 was asked again, the 400 never
    rows = ledger(store, result.run_id)
    assert [(r["status"], r["attempts"]) for r in rows] == [("ok", 1), ("ok", 2), ("error", 1)]
    assert [r["cost_usd"] for r in rows[:2]] == pytest.approx([cost(10, 60), cost(10, 5)])
    assert rows[2]["cost_usd"] is None
    stages = result.results["problems"][0]["epochs"][0]["stages"]
    assert [s["outcome"] for s in stages] == ["submitted", "submitted", "error"]
    assert stages[2]["error"].startswith("model call failed for good") and "prompt is too long" in stages[2]["error"]
    assert result.incomplete == 0 and result.results["usage"]["model_calls"]["failed"] == 1
    again = run(store, tmp_path, tools=(), max_retries=2)
    assert len(fake_env.requests) == 4 and again.detail["answer_ids"] == result.detail["answer_ids"]  # final: never asked again
