"""`--estimate` and `--max-cost` on the commands, end to end against the loopback fake server."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from helpers.improof import store  # noqa: F401 - a fixture: the commands' default store, with odd-sums
from helpers.improof_samples import submit
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.cli.costs import COST_CAP_EXIT
from theorembench.store import Store
from theorembench.store.schema import model_calls

runner = CliRunner()
MODEL = "openai-api/fake/m1"
# $2000 per million output tokens, input free (the fake's usage does not count the real prompt, the cap's hold
# does): a reply of 100 tokens costs $0.20, and a call capped at 100 tokens holds as much
PRICES = '[models]\n"openai-api/fake/*" = { input = 0.0, output = 2000.0 }\n'
CALL_COST = 100 * 2000 / 1e6
N_ITEMS = 29  # the released hard split of 2025-11


@pytest.fixture
def priced(fake_env, tmp_path, monkeypatch):
    (tmp_path / "prices.toml").write_text(PRICES)
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(tmp_path / "prices.toml"))
    monkeypatch.setenv("COLUMNS", "250")
    fake_env.set_script({"default": {"reply": "\\boxed{A}", "usage": {"prompt_tokens": 10, "completion_tokens": 100}}})
    return fake_env


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def forecast_json(tmp_path) -> dict:
    (path,) = (tmp_path / "home" / "forecasts").glob("forecast-eval-mcq-*.json")
    return json.loads(path.read_text())


def test_estimate_calls_no_model_and_changes_nothing(priced, lmb_hard, tmp_path):
    db = tmp_path / "s.db"
    out = tmp_path / "r.json"
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--max-tokens", "100", "--db", str(db),
                 "--out", str(out), "--estimate")
    assert res.exit_code == 0, res.output
    assert priced.stats()["completed"] == 0 and not out.exists()
    assert "forecast of `theorembench eval mcq`" in res.output and "≈" in res.output
    with Store(db) as st:
        assert st.usage()["calls"] == 0  # the real store holds no placeholder
    (row,) = forecast_json(tmp_path)["rows"]
    assert (row["stage"], row["model"], row["calls"], row["cached"]) == ("eval.mcq", MODEL, N_ITEMS, 0)
    assert (row["output_from"], row["output_expected"]) == ("cap", N_ITEMS * 100)  # no history: the token cap


def test_estimate_after_a_run_counts_the_cached_calls_as_free(priced, lmb_hard, tmp_path):
    db = tmp_path / "s.db"
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--max-tokens", "100", "--db", str(db),
                 "--out", str(tmp_path / "r.json"), "--limit", "5")
    assert res.exit_code == 0, res.output
    assert priced.stats()["completed"] == 5
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--max-tokens", "100", "--db", str(db),
                 "--estimate")
    assert res.exit_code == 0, res.output
    assert priced.stats()["completed"] == 5
    data = forecast_json(tmp_path)
    (row,) = data["rows"]
    assert (row["calls"], row["cached"]) == (N_ITEMS, 5)
    # the five replies of 100 tokens are the history of this model and stage: 100 tokens expected per call
    assert (row["output_from"], row["output_expected"]) == ("history", (N_ITEMS - 5) * 100)
    assert data["totals"]["to_make"] == N_ITEMS - 5


def test_max_cost_stops_within_one_call_and_a_rerun_resumes(priced, lmb_hard, tmp_path):
    db = tmp_path / "s.db"
    out = tmp_path / "r.json"
    args = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--max-tokens", "100", "--db", str(db), "--out",
            str(out), "--max-connections", "1"]
    res = invoke(*args, "--max-cost", "0.9")
    assert res.exit_code == COST_CAP_EXIT, res.output
    assert "stopped at the cost cap" in res.output and "--resume" in res.output
    with Store(db) as st:
        spent, calls = st.usage()["cost_usd"], st.usage()["calls"]
    assert calls == priced.stats()["completed"] == 4  # $0.80 spent: a fifth call would pass $0.90
    assert spent == pytest.approx(4 * CALL_COST)
    res = invoke(*args, "--max-cost", "50", "--resume")
    assert res.exit_code == 0, res.output
    assert priced.stats()["completed"] == N_ITEMS  # each item asked once over both runs
    assert json.loads(out.read_text())["test_info"]["total_tested"] == N_ITEMS


def test_estimate_and_max_cost_together_are_refused(priced, lmb_hard):
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--estimate", "--max-cost", "3")
    assert res.exit_code == 2 and "--estimate calls no model" in res.output


@pytest.mark.parametrize("command", [
    ["lmb", "build", "--month", "2025-11"], ["hybrid", "build"], ["hybrid", "eval", "x"], ["eternal", "build"],
    ["eternal", "calibrate", "x", "--suite", "m"], ["eternal", "eval", "x", "--model", "m"],
    ["improof", "eval", "--model", "m"], ["eval", "mcq", "x", "--model", "m"], ["release", "build"],
])  # fmt: skip
def test_every_command_that_calls_models_takes_the_cost_options(command):
    res = invoke(*command, "--help")
    assert res.exit_code == 0, res.output
    for option in ("--estimate", "--max-cost", "--batch"):
        assert option in res.output


def test_a_build_forecast_counts_its_first_stage_as_the_build_calls_it_and_a_built_one_as_free(
        fake_env, tmp_path, monkeypatch):  # fmt: skip
    from helpers.hybrid import verdict
    from helpers.paths import SHARED

    monkeypatch.setenv("COLUMNS", "250")
    gen = json.dumps({"distractors": [{"text": f"A subtly wrong version number {k}.", "change": f"change {k}"}
                                      for k in range(3)]})  # fmt: skip
    fake_env.set_script({"rules": [
        {"match": "flawed versions", "reply": gen},
        {"match": "subtly wrong version", "reply": verdict("incorrect")},
        {"match": "refereeing a single item", "reply": verdict("correct")},
    ]})  # fmt: skip
    cfg = tmp_path / "h.toml"
    cfg.write_text("[seed_filter]\nn1 = 2\nk1 = 3\n[distractors]\nn2 = 3\nk2 = 2\n"
                   "[distractor_filter]\nn3 = 3\nk3 = 4\nk4 = 4\n")  # fmt: skip
    args = ["hybrid", "build", "--stacks", str(SHARED / "data" / "stacks"), "--chapter", "brauer",
            "--max-seeds", "6", "--generator", "openai-api/fake/gen", "--judge", "openai-api/fake/judge1",
            "--judge", "openai-api/fake/judge2", "--config", str(cfg), "--out-dir", str(tmp_path / "hb")]  # fmt: skip
    res = invoke(*args, "--db", str(tmp_path / "fresh.db"), "--estimate")
    assert res.exit_code == 0, res.output
    assert fake_env.stats()["completed"] == 0 and not (tmp_path / "hb").exists()
    (path,) = (tmp_path / "home" / "forecasts").glob("forecast-hybrid-build-*.json")
    forecast = {(r["stage"], r["model"]): r for r in json.loads(path.read_text())["rows"]}

    built = tmp_path / "built.db"
    res = invoke(*args, "--db", str(built))
    assert res.exit_code == 0, res.output
    with Store(built) as st:
        first = st._rows(sa.select(model_calls.c.purpose).order_by(model_calls.c.id).limit(1))[0][0]
        made = {(r[0], r[1]): r[2] for r in st._rows(
            sa.select(model_calls.c.purpose, model_calls.c.model, sa.func.count())
            .where(model_calls.c.purpose == first).group_by(model_calls.c.purpose, model_calls.c.model))}
    assert made and all(forecast[key]["calls"] == n for key, n in made.items())  # the seed filter, call for call

    for old in (tmp_path / "home" / "forecasts").glob("*.json"):
        old.unlink()
    sent = fake_env.stats()["completed"]
    res = invoke(*args, "--db", str(built), "--estimate")
    assert res.exit_code == 0, res.output
    (path,) = (tmp_path / "home" / "forecasts").glob("forecast-hybrid-build-*.json")
    totals = json.loads(path.read_text())["totals"]
    # every step of the build is stored, so the rerun would not even look a call up: nothing to pay
    assert totals["to_make"] == 0 and totals["cost_expected_usd"] == 0 and fake_env.stats()["completed"] == sent


def test_an_agentic_evaluation_forecast_goes_through_inspect_without_calling_the_model(store, fake_env, tmp_path,
                                                                                      monkeypatch):  # fmt: skip

    fake_env.set_script({"rules": [{"match": "SUB-TWO", "reply": submit("100")},
                                   {"match": "SUB-ONE", "reply": submit("9")},
                                   {"match": "MAIN-Q", "reply": submit("proof")}]})  # fmt: skip
    monkeypatch.setenv("COLUMNS", "250")
    res = invoke("improof", "eval", "--model", "openai-api/fake/m", "--tools", "python", "--max-turns", "2",
                 "--out", str(tmp_path / "out"), "--estimate")
    assert res.exit_code == 0, res.output
    assert fake_env.stats()["completed"] == 0 and not (tmp_path / "out").exists()
    (path,) = (tmp_path / "home" / "forecasts").glob("forecast-improof-eval-*.json")
    rows = json.loads(path.read_text())["rows"]
    assert rows and all(r["model"] == "openai-api/fake/m" and r["calls"] >= 1 for r in rows)
