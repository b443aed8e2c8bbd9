"""`theorembench eval mcq` end to end against the loopback fake server."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import sqlalchemy as sa
from helpers.cli import PYTHON, cli_env
from helpers.paths import GOLDEN as GOLDEN_DIR
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.evaluate.mcq.items import is_substitution_resistant, load_dataset
from theorembench.evaluate.mcq.protocol import shuffle_options
from theorembench.store import Store
from theorembench.testing.fakellm import FakeLLMServer

runner = CliRunner()
MODEL = "openai-api/fake/m1"


@pytest.fixture
def store_db(db_url, monkeypatch):
    """The store the commands use by default, once on SQLite and once on PostgreSQL."""
    monkeypatch.setenv("THEOREMBENCH_DB", db_url)
    return db_url


def invoke(*args: str):
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result


# keyed labels of the released hard split under seed 42, recorded once (tests/golden)
GOLDEN = GOLDEN_DIR / "lmb_202511_hard_shuffle_seed42.json"
KEYED = "".join(e["keyed"] for e in json.loads(GOLDEN.read_text())["items"])


def question(lmb_hard, index: int) -> str:
    return re.escape(load_dataset(lmb_hard).items[index].mcq.question[:60])


def test_released_structure_and_accuracy(fake_env, lmb_hard, tmp_path):
    out = tmp_path / "r.json"
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--out", str(out), "--max-tokens", "1000")
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert set(data) == {"test_info", "summary", "overall", "detailed_results"}
    info = data["test_info"]
    for key in ("date", "model", "month", "reasoning_effort", "max_tokens", "seed", "n_samples",
                "total_candidates", "total_tested", "timestamp"):  # fmt: skip
        assert key in info
    assert (info["month"], info["seed"], info["total_tested"], info["max_tokens"]) == ("202511", 42, 29, 1000)
    # the fake always answers \boxed{A}: correct exactly where A is the keyed label (items 3, 11, 12, 21)
    assert KEYED.count("A") == 4
    assert data["overall"] == data["summary"]["all"]
    overall = data["overall"]
    assert (overall["correct"], overall["total"], overall["n"]) == (4, 29, 29)
    assert overall["ci95"] == [0.055, 0.3056]  # Wilson, 4 of 29
    assert data["summary"]["by_choice_style"]["substitution_resistant"]["ci95"] == [0.0127, 0.3147]  # 1 of 14
    assert data["summary"]["by_choice_style"]["original"]["ci95"] == [0.0705, 0.4519]  # 3 of 15
    assert all("ci95" in block and "n" in block for block in data["summary"]["by_theorem_type"].values())
    assert "mean_at_n" not in data["summary"]
    first = data["detailed_results"][0]
    for key in ("id", "theorem_type", "score", "correct_answer", "model_answer", "raw_response",
                "is_correct", "reasoning_effort", "prompt_tokens", "completion_tokens", "total_tokens",
                "reasoning_tokens", "elapsed_seconds", "error", "n_samples", "samples"):  # fmt: skip
        assert key in first
    assert [r["id"] for r in data["detailed_results"]] == [it.id for it in load_dataset(lmb_hard).items]
    styles = data["summary"]["by_choice_style"]
    assert styles["substitution_resistant"]["total"] == 14 and styles["original"]["total"] == 15
    assert "Existence" in data["summary"]["by_theorem_type"]
    assert data["summary"]["by_month"]["202511"]["total"] == 29
    # what the model saw: the released layout, and the system prompt with the boxed instruction
    body = fake_env.requests[0]["body"]
    assert body["messages"][0]["role"] == "system" and "\\boxed{{}}" in body["messages"][0]["content"]
    assert body["messages"][1]["content"].startswith("## Question\n\n")
    assert "## Useful Hints" not in body["messages"][1]["content"]
    assert "Existence" in res.output and "accuracy by logical category" in res.output
    assert "13.8% [5.5–30.6] n=29" in res.output


def test_failures_and_unparsed_are_recorded_per_item(fake_env, lmb_hard, tmp_path, store_db):
    ds = load_dataset(lmb_hard)
    broken, mute = ds.items[1], ds.items[2]
    fake_env.set_script({
        "rules": [
            {"match": re.escape(broken.mcq.question[:60]), "reply": "x", "faults": [{"kind": "500", "times": 99}]},
            {"match": re.escape(mute.mcq.question[:60]), "reply": "I cannot decide between these."},
        ],
        "default": {"reply": "\\boxed{B}"},
    })  # fmt: skip
    out = tmp_path / "r.json"
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--out", str(out), "--limit", "5",
                 "--max-retries", "1")  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    rec = {r["id"]: r for r in data["detailed_results"]}
    err = rec[broken.id]
    assert err["status"] == "error" and "server_error" in err["error"] and "after 2 attempts" in err["error"]
    assert err["is_correct"] is False and err["model_answer"] is None
    assert fake_env.stats()["rule_hits"]["0"] == 2  # bounded: 1 try + 1 retry
    unparsed = rec[mute.id]
    assert unparsed["status"] == "unparsed" and unparsed["model_answer"] is None and unparsed["error"] is None
    assert data["summary"]["errors"] == 1 and data["summary"]["unparsed"] == 1
    assert data["summary"]["all"]["total"] == 5  # errors and unparsed count as wrong, not dropped


def test_resume_redoes_only_failed_items(fake_env, lmb_hard, tmp_path, store_db):
    ds = load_dataset(lmb_hard)
    target = ds.items[0]
    fake_env.set_script({"rules": [{"match": re.escape(target.mcq.question[:60]), "reply": "\\boxed{C}",
                                    "faults": [{"kind": "429", "times": 2, "retry_after": 0.01}]}]})  # fmt: skip
    args = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "4", "--max-retries", "0",
            "--out", str(tmp_path / "r.json")]  # fmt: skip
    assert invoke(*args).exit_code == 0
    first = json.loads((tmp_path / "r.json").read_text())
    assert first["detailed_results"][0]["status"] == "error"
    assert fake_env.stats()["total_requests"] == 4
    res = invoke(*args, "--resume")
    assert res.exit_code == 0, res.output
    second = json.loads((tmp_path / "r.json").read_text())
    # the 3 answered items were kept; the failed one was asked again (and hit its 2nd 429)
    assert fake_env.stats()["total_requests"] == 5
    assert second["summary"]["resumed_items"] == 3
    assert second["test_info"]["run_id"] == first["test_info"]["run_id"]
    assert invoke(*args, "--resume").exit_code == 0
    third = json.loads((tmp_path / "r.json").read_text())
    assert third["detailed_results"][0]["model_answer"] == "C"
    assert fake_env.stats()["total_requests"] == 6
    # without --resume a new run is made, but every call comes from the cache
    assert invoke(*args).exit_code == 0
    fourth = json.loads((tmp_path / "r.json").read_text())
    assert fake_env.stats()["total_requests"] == 6
    assert fourth["summary"]["cache_hits"] == 4 and fourth["summary"]["calls_made"] == 0


def test_samples_sketch_mode_and_sketch_gain(fake_env, lmb_hard, tmp_path, store_db):
    fake_env.set_script({"rules": [{"match": "## Useful Hints", "reply": "{last_user}"}],
                         "default": {"reply": "\\boxed{E}"}})  # fmt: skip
    base = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "6"]
    assert invoke(*base, "--out", str(tmp_path / "plain.json")).exit_code == 0
    res = invoke(*base, "--sketch", "--n", "3", "--out", str(tmp_path / "sketch.json"))
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "sketch.json").read_text())
    assert data["test_info"]["sketch"] is True and data["test_info"]["n_samples"] == 3
    rec = data["detailed_results"][0]
    assert len(rec["samples"]) == 3 and rec["n_samples"] == 3
    hinted = [r for r in fake_env.requests if "## Useful Hints" in r["body"]["messages"][1]["content"]]
    assert len(hinted) == 6 * 3
    item = load_dataset(lmb_hard).items[0]
    assert hinted[0]["body"]["messages"][1]["content"].endswith(item.expanded_sketch)
    # n=1 run exists on the same file, model and settings? No: n differs, so no gain is claimed.
    assert "sketch_gain" not in data["summary"]
    res = invoke(*base, "--sketch", "--out", str(tmp_path / "sketch1.json"))
    gain = json.loads((tmp_path / "sketch1.json").read_text())["summary"]["sketch_gain"]
    plain = json.loads((tmp_path / "plain.json").read_text())["summary"]["all"]["accuracy"]
    sketch = json.loads((tmp_path / "sketch1.json").read_text())["summary"]["all"]["accuracy"]
    assert gain["all"]["gain_pp"] == pytest.approx(round(100 * (sketch - plain), 2))
    assert "sketch gain" in res.output


def test_missing_key_and_unknown_model_fail_before_work(fake, lmb_hard, tmp_path, monkeypatch):
    for model, needle in [("openai/gpt-5", "OPENAI_API_KEY"), ("acme/x", "unknown model provider"),
                          ("openai-api/fake/m", "FAKE_BASE_URL")]:  # fmt: skip
        res = runner.invoke(app, ["eval", "mcq", str(lmb_hard), "--model", model, "--out", str(tmp_path / "r.json")])
        assert res.exit_code == 2
        assert needle in res.output
    assert not (tmp_path / "r.json").exists()
    assert fake.stats()["total_requests"] == 0


def test_store_traces_items_to_calls(fake_env, lmb_hard, tmp_path, db_url):
    db = db_url
    assert invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "3", "--db", db,
                  "--out", str(tmp_path / "r.json")).exit_code == 0  # fmt: skip
    with Store(db) as store:
        run = store.runs()[0]
        assert run["status"] == "finished" and run["kind"] == "eval.mcq"
        results = store.results(run["id"])
        assert len(results) == 3
        for row in results:
            call = store.get_call(row["call_id"])
            assert call["run_id"] == run["id"] and call["status"] == "ok"
        assert store.fetch(sa.text("SELECT n_items FROM datasets"))[0][0] == 29
    res = invoke("store", "runs", "--db", db, "--json")
    assert json.loads(res.output)[0]["summary"]["all"]["total"] == 3


def test_cli_process_writes_runs_into_postgresql(fake_env, lmb_hard, tmp_path, pg_url):
    cmd = [PYTHON, "-m", "theorembench.cli", "eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "4",
           "--db", pg_url, "--out", str(tmp_path / "r.json"), "--no-log"]  # fmt: skip
    done = subprocess.run(cmd, env=cli_env(), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(tmp_path.glob("postgresql*")) and not (tmp_path / "home" / "theorembench.db").exists()
    with Store(pg_url) as store:
        (run,) = store.runs()
        assert (run["kind"], run["status"]) == ("eval.mcq", "finished")
        assert len(store.results(run["id"])) == 4 and store.usage(run["id"])["calls"] == 4
    run_id = json.loads((tmp_path / "r.json").read_text())["test_info"]["run_id"]
    assert run_id == run["id"]


def test_inspect_log_readable(fake_env, lmb_hard, tmp_path):
    from inspect_ai.log import read_eval_log

    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "4", "--out", str(tmp_path / "r.json"),
                 "--log-dir", str(tmp_path / "logs"))  # fmt: skip
    assert res.exit_code == 0
    logs = list((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == 1
    log = read_eval_log(str(logs[0]))
    assert log.status == "success" and log.eval.model == MODEL
    assert len(log.samples) == 4
    sample = log.samples[0]
    assert sample.messages[-1].role == "assistant" and sample.messages[-1].text == "\\boxed{A}"
    assert sample.scores["mcq_match"].value in ("C", "I")
    data = json.loads((tmp_path / "r.json").read_text())
    assert log.results.scores[0].metrics["accuracy"].value == data["summary"]["all"]["accuracy"]


def test_substitution_resistant_keyed_answer_is_meta_option(lmb_hard):
    ds = load_dataset(lmb_hard)
    item = next(it for it in ds.items if is_substitution_resistant(it))
    i = ds.items.index(item)
    presented = shuffle_options(item, i, 42)
    assert dict(presented.options)[presented.correct_label].startswith("One of the remaining options")


def test_report_command_compares_runs_and_draws_charts(fake_env, lmb_hard, tmp_path):
    fake_env.set_script({"rules": [{"match": "## Useful Hints", "reply": "\\boxed{A}"}],
                         "default": {"reply": "\\boxed{B}"}})  # fmt: skip
    base = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "8", "--no-log"]
    assert invoke(*base, "--out", str(tmp_path / "a.json")).exit_code == 0
    assert invoke(*base, "--sketch", "--out", str(tmp_path / "b.json")).exit_code == 0
    res = invoke("report", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--out-dir", str(tmp_path / "rep"))
    assert res.exit_code == 0, res.output
    md = (tmp_path / "rep" / "comparison.md").read_text().splitlines()
    assert len(md) == 4 and "| a.json |" in md[2] and "| sketch |" in md[3]
    a = json.loads((tmp_path / "a.json").read_text())["summary"]["all"]["accuracy"]
    assert f"{100 * a:.1f}%" in md[2]
    res = invoke("report", str(tmp_path / "a.json"), "--out-dir", str(tmp_path / "one"))
    assert res.exit_code == 0
    svg = (tmp_path / "one" / "accuracy_by_category.svg").read_text()
    assert svg.startswith("<svg") and svg.count('fill="#3b6ea8"') == len(
        json.loads((tmp_path / "a.json").read_text())["summary"]["by_theorem_type"])
    assert "accuracy_by_category.svg" in (tmp_path / "one" / "report.md").read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    res = runner.invoke(app, ["report", str(bad)])
    assert res.exit_code == 2 and "not a theorembench results file" in res.output


def test_two_servers_behind_one_model_name_never_share_a_run(fake_env, lmb_hard, tmp_path, monkeypatch):
    args = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "3", "--no-log", "--out", str(tmp_path / "r.json")]
    assert invoke(*args).exit_code == 0
    first = json.loads((tmp_path / "r.json").read_text())
    assert fake_env.stats()["total_requests"] == 3
    with FakeLLMServer({"default": {"reply": "\\boxed{B}"}}) as other:
        monkeypatch.setenv("FAKE_BASE_URL", other.base_url)
        res = invoke(*args, "--resume")
        assert res.exit_code == 0, res.output
        second = json.loads((tmp_path / "r.json").read_text())
        # another server: a new run, and every item asked of it
        assert second["test_info"]["run_id"] != first["test_info"]["run_id"]
        assert second["summary"]["resumed_items"] == 0
        assert other.stats()["total_requests"] == 3
        assert [r["model_answer"] for r in second["detailed_results"]] == ["B", "B", "B"]
        assert second["test_info"]["endpoint"] == other.base_url.rstrip("/")
        # a revision tag on the same server is another run too
        res = invoke(*args, "--resume", "--model-revision", "v2")
        assert res.exit_code == 0, res.output
        third = json.loads((tmp_path / "r.json").read_text())
        assert third["test_info"]["run_id"] not in (first["test_info"]["run_id"], second["test_info"]["run_id"])
        assert third["test_info"]["revision"] == "v2"
    assert fake_env.stats()["total_requests"] == 3


def test_system_prompt_and_user_template_files_reach_the_model(fake_env, lmb_hard, tmp_path):
    system = tmp_path / "system.txt"
    system.write_text("Answer with one of A, B, C, D, E inside \\boxed{}, and nothing else inside the box.\n")
    template = tmp_path / "user.txt"
    template.write_text("Stem: {question}\n--\n{choices}\n--\nLetters: {labels}")
    out = tmp_path / "r.json"
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "2", "--out", str(out),
                 "--system-prompt", str(system), "--user-template", str(template))  # fmt: skip
    assert res.exit_code == 0, res.output
    body = fake_env.requests[0]["body"]
    assert body["messages"][0] == {
        "role": "system", "content": "Answer with one of A, B, C, D, E inside \\boxed{}, and nothing else inside the box."}
    user = body["messages"][1]["content"]
    assert user.startswith("Stem: ") and "\n--\n(A) " in user and user.endswith("\n--\nLetters: A, B, C, D, E")
    info = json.loads(out.read_text())["test_info"]
    assert (info["system_prompt"], info["user_template"]) == (str(system), str(template))
    # another wording is another run: resuming the default prompt's run asks again
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "2", "--out", str(out), "--resume")
    assert json.loads(out.read_text())["summary"]["resumed_items"] == 0
    assert fake_env.stats()["total_requests"] == 4
    template.write_text("{question} only")
    res = runner.invoke(app, ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--user-template", str(template)])
    assert res.exit_code == 2 and "lacks {choices}" in res.output


def test_resume_asks_unparsed_items_again(fake_env, lmb_hard, tmp_path, store_db):
    fake_env.set_script({"rules": [{"match": question(lmb_hard, 0), "reply": ["I cannot decide.", "\\boxed{E}"]}],
                         "default": {"reply": "\\boxed{D}"}})  # fmt: skip
    args = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "3", "--no-log", "--out", str(tmp_path / "r.json")]
    assert invoke(*args).exit_code == 0
    first = json.loads((tmp_path / "r.json").read_text())
    assert first["detailed_results"][0]["status"] == "unparsed" and first["summary"]["unparsed"] == 1
    assert invoke(*args, "--resume").exit_code == 0
    second = json.loads((tmp_path / "r.json").read_text())
    # the two answered items kept; the unparsed one asked of the model again, past the cache
    assert fake_env.stats()["total_requests"] == 4
    assert second["summary"]["resumed_items"] == 2 and second["summary"]["unparsed"] == 0
    assert second["detailed_results"][0]["model_answer"] == "E" and second["detailed_results"][0]["is_correct"]
    assert second["test_info"]["run_id"] == first["test_info"]["run_id"]
    assert invoke(*args, "--resume").exit_code == 0
    assert fake_env.stats()["total_requests"] == 4


def test_preset_sets_the_released_vllm_sampling(fake_env, lmb_hard, tmp_path):
    base = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "1", "--no-log", "--out", str(tmp_path / "r.json")]
    assert invoke(*base).exit_code == 0
    assert "temperature" not in fake_env.requests[-1]["body"] and "top_p" not in fake_env.requests[-1]["body"]
    assert invoke(*base, "--preset", "released-vllm").exit_code == 0
    body = fake_env.requests[-1]["body"]
    assert (body["temperature"], body["top_p"]) == (1.0, 0.95)
    assert json.loads((tmp_path / "r.json").read_text())["test_info"]["preset"] == "released-vllm"
    assert invoke(*base, "--preset", "released-vllm", "--temperature", "0.3").exit_code == 0
    body = fake_env.requests[-1]["body"]
    assert (body["temperature"], body["top_p"]) == (0.3, 0.95)
    res = runner.invoke(app, [*base, "--preset", "fastest"])
    assert res.exit_code == 2 and "released-vllm" in res.output


def test_sketch_gain_is_paired_over_common_items(fake_env, lmb_hard, tmp_path, store_db):
    # keyed labels of items 0-5: E E D A E D; without the sketch the model says D, with it E
    fake_env.set_script({"rules": [{"match": "## Useful Hints", "reply": "\\boxed{E}"}],
                         "default": {"reply": "\\boxed{D}"}})  # fmt: skip
    base = ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--no-log"]
    assert invoke(*base, "--limit", "6", "--out", str(tmp_path / "plain.json")).exit_code == 0
    res = invoke(*base, "--limit", "4", "--sketch", "--out", str(tmp_path / "sketch.json"))
    assert res.exit_code == 0, res.output
    gain = json.loads((tmp_path / "sketch.json").read_text())["summary"]["sketch_gain"]
    # over items 0-3 only: 2/4 with the sketch, 1/4 without (not the plain run's 2/6)
    assert gain["items_compared"] == 4 and gain["all"]["n"] == 4
    assert (gain["all"]["with_sketch"], gain["all"]["without_sketch"], gain["all"]["gain_pp"]) == (0.5, 0.25, 25.0)
    low, high = gain["all"]["ci95_pp"]
    assert -100 <= low < 0 < 25 < high <= 100  # per-item differences +1, +1, -1, 0
    assert gain["by_choice_style"]["original"]["n"] + gain["by_choice_style"].get(
        "substitution_resistant", {"n": 0})["n"] == 4
    assert "+25.0 pp [" in res.output


def test_mean_at_n_with_interval_next_to_first_sample_accuracy(fake_env, lmb_hard, tmp_path):
    # keyed E, E, D for items 0-2: item 0 right in 1 of 3 samples, item 1 in 3 of 3, item 2 in none
    fake_env.set_script({"rules": [
        {"match": question(lmb_hard, 0), "reply": ["\\boxed{E}", "\\boxed{B}", "\\boxed{B}"]},
        {"match": question(lmb_hard, 1), "reply": "\\boxed{E}"},
    ], "default": {"reply": "\\boxed{A}"}})  # fmt: skip
    out = tmp_path / "r.json"
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "3", "--n", "3", "--out", str(out),
                 "--log-dir", str(tmp_path / "logs"))  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = json.loads(out.read_text())["summary"]
    mean = summary["mean_at_n"]
    assert (mean["value"], mean["n"], mean["samples_per_item"]) == (0.4444, 3, 3)  # (1/3 + 1 + 0) / 3
    assert 0 <= mean["ci95"][0] <= 0.4444 <= mean["ci95"][1] <= 1
    assert summary["all"]["correct"] in (1, 2) and summary["all"]["total"] == 3  # first samples only
    assert "mean@n" in res.output and "44.4% [" in res.output


def test_inspect_log_marks_failed_samples_as_errors(fake_env, lmb_hard, tmp_path):
    from inspect_ai.log import read_eval_log

    fake_env.set_script({"rules": [{"match": question(lmb_hard, 1), "reply": "x", "faults": [{"kind": "500", "times": 99}]}]})
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "3", "--max-retries", "0",
                 "--out", str(tmp_path / "r.json"), "--log-dir", str(tmp_path / "logs"))  # fmt: skip
    assert res.exit_code == 0, res.output
    log = read_eval_log(str(next((tmp_path / "logs").glob("*.eval"))))
    by_id = {s.id: s for s in log.samples}
    failed = by_id[load_dataset(lmb_hard).items[1].id]
    assert failed.error is not None and "server_error" in failed.error.message
    assert not failed.scores
    others = [s for s in log.samples if s is not failed]
    assert all(s.error is None and s.scores["mcq_match"].value in ("C", "I") for s in others)
    assert log.results.completed_samples == 2 and log.results.total_samples == 3
    metrics = log.results.scores[0].metrics
    assert (metrics["ci95_low"].value, metrics["ci95_high"].value) == tuple(
        json.loads((tmp_path / "r.json").read_text())["overall"]["ci95"])


def test_report_prints_names_from_the_file_as_text(fake_env, lmb_hard, tmp_path):
    out = tmp_path / "r.json"
    assert invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", "2", "--no-log", "--out", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    data["summary"]["by_theorem_type"] = {"[/b]odd [link=x]": {"correct": 1, "total": 2, "accuracy": 0.5}}
    out.write_text(json.dumps(data))
    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output
    assert "[/b]odd [link=x]" in res.output
    assert "50.0% [9.5–90.5] n=2" in res.output  # Wilson for 1 of 2, computed when the file has no interval


def test_lmb_eval_is_the_same_evaluation_as_eval_mcq(fake_env, lmb_hard, tmp_path, store_db):
    fake_env.set_script({"default": {"reply": "\\boxed{B}"}})
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    res = invoke("lmb", "eval", str(lmb_hard), "--model", MODEL, "--out", str(first), "--limit", "3")
    assert res.exit_code == 0, res.output
    asked = fake_env.stats()["total_requests"]
    assert asked == 3
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--out", str(second), "--limit", "3")
    assert res.exit_code == 0, res.output
    # one evaluation under two names: the second finds every answer stored and asks nothing
    assert fake_env.stats()["total_requests"] == asked
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    assert [r["model_answer"] for r in a["detailed_results"]] == [r["model_answer"] for r in b["detailed_results"]]
    assert a["summary"]["all"]["total"] == 3


def test_the_released_results_flavour_is_what_the_authors_scripts_write(fake_env, lmb_hard, tmp_path):
    # issue 21, item 7: the released scripts' file (keys and formats from their eval.py, see shared/data/lmb/README)
    out = tmp_path / "r.json"
    res = invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--out", str(out), "--no-log",
                 "--results-flavour", "released", "--token-parameter", "max_completion_tokens", "--max-tokens", "900")
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert set(data) == {"test_info", "summary", "overall", "detailed_results"}
    assert set(data["test_info"]) == {"date", "model", "month", "reasoning_effort", "max_tokens", "seed", "n_samples",
                                      "total_candidates", "total_tested", "timestamp"}  # fmt: skip
    assert re.fullmatch(r"\d{4}_\d{6}", data["test_info"]["date"]) and data["test_info"]["max_tokens"] == 900
    assert data["summary"] == {"all": {"correct": 4, "total": 29, "accuracy": 4 / 29}} == {"all": data["overall"]}
    rows = data["detailed_results"]
    assert set(rows[0]) == {"id", "theorem_type", "score", "correct_answer", "model_answer", "raw_response",
                            "is_correct", "reasoning_effort", "prompt_tokens", "completion_tokens", "total_tokens",
                            "reasoning_tokens", "elapsed_seconds", "error", "n_samples", "samples"}  # fmt: skip
    released = json.loads(lmb_hard.read_text())
    meta_scores = [it["mcq"]["meta"].get("score") for it in released]
    assert all(r["theorem_type"] == "all" and r["samples"] is None for r in rows)
    assert [r["score"] for r in rows] == meta_scores
    # theorembench's own file beside it, with intervals; the request named the limit as the Azure script does
    ours = json.loads((tmp_path / "r.theorembench.json").read_text())
    assert ours["overall"]["ci95"] == [0.055, 0.3056]
    body = fake_env.requests[-1]["body"]
    assert body["max_completion_tokens"] == 900 and "max_tokens" not in body
    assert "results as the released scripts write them" in res.output
    assert invoke("eval", "mcq", str(lmb_hard), "--model", MODEL, "--results-flavour", "authors").exit_code == 2


def test_released_flavour_takes_the_score_from_mcq_meta_and_keeps_samples_from_two_on():
    from datetime import datetime

    from theorembench.evaluate.mcq.released import released_results

    doc = {"test_info": {"date": "2026-12-02", "model": "m", "extra": 1},
           "summary": {"all": {"correct": 1, "total": 2, "accuracy": 0.5, "ci95": [0.09, 0.91]}},
           "detailed_results": [{"id": "a", "theorem_type": ["Existence"], "score": 7, "n_samples": 1, "samples": [],
                                 "status": "ok"},
                                {"id": "b", "theorem_type": "unknown", "score": 5, "n_samples": 2,
                                 "samples": [{"is_correct": True}, {"is_correct": False}]}]}  # fmt: skip
    raw = {"a": {"mcq": {"meta": {"score": 6}}}, "b": {"mcq": {"meta": {}}}}
    got = released_results(doc, raw, datetime(2026, 12, 2, 9, 5, 7))
    assert got["test_info"]["date"] == "1202_090507" and "extra" not in got["test_info"]
    a, b = got["detailed_results"]
    assert (a["score"], a["samples"], a["theorem_type"]) == (6, None, "all") and "status" not in a
    assert (b["score"], b["samples"]) == (None, [{"is_correct": True}, {"is_correct": False}])
    assert got["overall"] == {"correct": 1, "total": 2, "accuracy": 0.5}
