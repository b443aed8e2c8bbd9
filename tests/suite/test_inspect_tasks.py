"""theorembench's evaluations as Inspect tasks: the real `inspect eval` / `inspect eval-set` / `inspect view` in child
processes, scripted replies from the loopback fake server, the logs read back with Inspect's own reader and the runs
found in the theorembench store."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env
from helpers.improof import store as improof_store  # noqa: F401 - a fixture: the default store with odd-sums, active
from helpers.paths import GOLDEN
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.methods.improof.answers import list_answers
from theorembench.store import Store, loads, open_store

INSPECT = str(Path(PYTHON).with_name("inspect"))
KEYED = [e["keyed"] for e in json.loads((GOLDEN / "lmb_202511_hard_shuffle_seed42.json").read_text())["items"]]
TASKS = ["theorembench/eternal", "theorembench/hybrid", "theorembench/improof", "theorembench/lmb_mcq"]


def inspect(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """The `inspect` command of this environment, in a child process (the test's home, store and fake endpoint)."""
    return subprocess.run([INSPECT, *args], env=cli_env(), capture_output=True, text=True, timeout=timeout, check=False)


def only_log(log_dir: Path):
    from inspect_ai.log import list_eval_logs, read_eval_log

    [info] = list_eval_logs(str(log_dir))
    return read_eval_log(info)


def per_sample(log) -> dict:
    """(sample id, epoch) -> (score value, answer, status) of the log's one scorer."""
    out = {}
    for s in log.samples:
        [score] = s.scores.values()
        out[(s.id, s.epoch)] = (score.value, score.answer, score.metadata["status"])
    return out


def question(lmb_hard: Path, index: int) -> str:
    return re.escape(json.loads(lmb_hard.read_text())[index]["mcq"]["question"][:60])


def store_runs() -> list[dict]:
    res = CliRunner().invoke(app, ["store", "runs", "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


# -- the registry ------------------------------------------------------------------------------------------------

REGISTRY = """
from inspect_ai._util.registry import registry_find, registry_info, registry_lookup
for name in {names!r}:  # what `inspect eval theorembench/<task>` looks up: the entry point named theorembench
    assert registry_lookup("task", name) is not None, name
print(sorted(registry_info(t).name for t in registry_find(lambda i: i.type == "task")))
print(registry_lookup("sandboxenv", "theorembench/theorembench") is not None)
"""


def test_inspects_registry_lists_the_four_tasks_under_the_package_prefix():
    res = subprocess.run([PYTHON, "-c", REGISTRY.format(names=TASKS)], env=cli_env(), capture_output=True, text=True,
                         timeout=120, check=False)  # fmt: skip
    assert res.returncode == 0, res.stderr
    listed, sandbox = res.stdout.splitlines()
    assert [n for n in eval(listed) if n.startswith("theorembench/")] == TASKS
    assert sandbox == "True"  # the entry point still registers the theorembench sandbox environment


# -- LMB ---------------------------------------------------------------------------------------------------------


def test_lmb_mcq_is_scored_by_the_protocol_and_recorded_in_the_store(fake_env, lmb_hard, tmp_path):
    assert KEYED[:5] == ["E", "E", "D", "A", "E"]  # the recorded keyed labels of the first five items
    fake_env.set_script({"rules": [{"match": question(lmb_hard, 0), "reply": "Hence \\boxed{E}."},
                                   {"match": question(lmb_hard, 2), "reply": "I cannot decide."}],
                         "default": {"reply": "\\boxed{A}"}})  # fmt: skip
    res = inspect("eval", "theorembench/lmb_mcq", "-T", f"file={lmb_hard}", "--model", "openai-api/fake/m1",
                  "--limit", "5", "--log-dir", str(tmp_path / "logs"), "--display", "none")  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    log = only_log(tmp_path / "logs")
    assert (log.status, log.eval.task, log.eval.model) == ("success", "theorembench/lmb_mcq", "openai-api/fake/m1")
    ids = [e["id"] for e in json.loads((GOLDEN / "lmb_202511_hard_shuffle_seed42.json").read_text())["items"][:5]]
    assert per_sample(log) == {
        (ids[0], 1): ("C", "E", "ok"), (ids[1], 1): ("I", "A", "ok"), (ids[2], 1): ("I", "", "unparsed"),
        (ids[3], 1): ("C", "A", "ok"), (ids[4], 1): ("I", "A", "ok")}  # fmt: skip
    assert [s.target for s in sorted(log.samples, key=lambda s: s.metadata["index"])] == KEYED[:5]
    metrics = log.results.scores[0].metrics
    assert (log.results.scores[0].name, metrics["accuracy"].value) == ("lmb_mcq_match", pytest.approx(0.4))
    # what the model saw: our system prompt (the released doubled braces) and the released user layout, no hint
    body = fake_env.requests[0]["body"]
    assert body["messages"][0]["role"] == "system" and "\\boxed{{}}" in body["messages"][0]["content"]
    assert body["messages"][1]["content"].startswith("## Question\n\n") and "## Useful Hints" not in str(body)
    # the run, in the default store, as `theorembench store runs` lists it
    [run] = store_runs()
    assert (run["kind"], run["model"], run["status"], run["name"]) == ("eval.mcq", "openai-api/fake/m1", "finished",
                                                                       "qaEval_202511_ge5_hard")  # fmt: skip
    assert run["score"] == {"value": 0.4, "ci95": [0.1176, 0.7693], "n": 5, "errors": 0, "method": "wilson"}
    assert run["summary"]["statuses"] == {"ok": 4, "unparsed": 1, "error": 0, "pending": 0}
    with open_store(None) as st:
        rows = st.results(run["id"])
    assert [(r["idx"], r["item_id"], r["answer"], r["correct_label"], r["is_correct"]) for r in rows] == [
        (0, ids[0], "E", "E", 1), (1, ids[1], "A", "E", 0), (2, ids[2], "", "D", 0), (3, ids[3], "A", "A", 1),
        (4, ids[4], "A", "E", 0)]  # fmt: skip


def test_lmb_mcq_sends_what_theorembench_eval_mcq_sends_with_the_sketch(fake_env, lmb_hard, tmp_path):
    fake_env.set_script({"default": {"reply": "\\boxed{B}"}})
    res = CliRunner().invoke(app, ["eval", "mcq", str(lmb_hard), "--model", "openai-api/fake/m1", "--sketch",
                                   "--limit", "3", "--out", str(tmp_path / "r.json")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    theirs = [r["body"]["messages"] for r in fake_env.requests]
    done = inspect("eval", "theorembench/lmb_mcq", "-T", f"file={lmb_hard}", "-T", "with_sketch=true", "--model",
                   "openai-api/fake/m1", "--limit", "3", "--log-dir", str(tmp_path / "logs"), "--display", "none")
    assert done.returncode == 0, done.stdout + done.stderr
    ours = [r["body"]["messages"] for r in fake_env.requests[len(theirs):]]
    assert len(theirs) == len(ours) == 3
    def user(msgs: list) -> str:  # concurrent requests: compare in one order
        return msgs[1]["content"]

    assert sorted(ours, key=user) == sorted(theirs, key=user)
    assert all("## Useful Hints" in m[1]["content"] for m in ours)
    assert fake_env.requests[-1]["body"]["max_tokens"] == 16384  # the command's default, sent by the task too


def test_eval_set_over_two_models_writes_a_log_and_a_run_for_each(fake_env, lmb_hard, tmp_path):
    # m2 through theorembench's own provider (its LLM layer and ledger); the store names it without the prefix
    fake_env.set_script({"rules": [{"model": "m2", "match": ".", "reply": "\\boxed{E}"}],
                         "default": {"reply": "\\boxed{A}"}})  # fmt: skip
    res = inspect("eval-set", "theorembench/lmb_mcq", "-T", f"file={lmb_hard}", "--model",
                  "openai-api/fake/m1,theorembench/openai-api/fake/m2", "--limit", "5", "--log-dir",
                  str(tmp_path / "logs"), "--display", "none")  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = {read_eval_log(i).eval.model: read_eval_log(i) for i in list_eval_logs(str(tmp_path / "logs"))}
    assert sorted(logs) == ["openai-api/fake/m1", "theorembench/openai-api/fake/m2"]
    assert logs["theorembench/openai-api/fake/m2"].results.scores[0].metrics["accuracy"].value == pytest.approx(0.6)
    runs = {r["model"]: r for r in store_runs()}
    assert sorted(runs) == ["openai-api/fake/m1", "openai-api/fake/m2"]
    assert (runs["openai-api/fake/m1"]["score"]["value"], runs["openai-api/fake/m2"]["score"]["value"]) == (0.2, 0.6)
    assert {r["kind"] for r in runs.values()} == {"eval.mcq"}
    with open_store(None) as st:  # the theorembench provider's calls are in the ledger
        assert st.usage_by_model()[0]["model"] == "openai-api/fake/m2"


def test_a_missing_items_file_stops_with_one_line(tmp_path):
    res = inspect("eval", "theorembench/eternal", "-T", f"file={tmp_path / 'nope.jsonl'}", "--model", "mockllm/model",
                  "--log-dir", str(tmp_path / "logs"))  # fmt: skip
    assert res.returncode == 1 and "Traceback" not in res.stdout + res.stderr
    said = " ".join(res.stdout.split())
    assert f"theorembench/eternal: {tmp_path / 'nope.jsonl'}: cannot read the instances file" in said


# -- Proof2Hybrid, with `inspect view` ------------------------------------------------------------------------------

QUESTIONS = [
    {"id": f"q{i}", "m": 2, "n": 4, "answer": answer,
     "items": [{"number": k, "text": f"Item text {i}.{k}", "correct": k in answer} for k in range(1, 5)]}
    for i, answer in enumerate([[1, 2], [1, 3], [3, 4]])
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, deadline: float):
    """GET ``url`` as JSON, trying again until the server answers or the deadline passes."""
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return json.loads(resp.read())
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_hybrid_task_scores_picks_records_the_run_and_opens_in_inspect_view(fake_env, tmp_path):
    folder = tmp_path / "hb"
    folder.mkdir()
    (folder / "questions.json").write_text(json.dumps(QUESTIONS))
    fake_env.set_script({"rules": [{"match": "Item text 1.1", "reply": "The answer: \\boxed{1, 2}"},
                                   {"match": "Item text 2.1", "reply": "I think 1 and 2 and 3."}],
                         "default": {"reply": "\\boxed{1, 2}"}})  # fmt: skip
    db = tmp_path / "other.db"
    res = inspect("eval", "theorembench/hybrid", "-T", f"file={folder}", "-T", f"db={db}", "--model",
                  "openai-api/fake/m", "--log-dir", str(tmp_path / "logs"), "--display", "none")  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    log = only_log(tmp_path / "logs")
    # q0 keyed 1,2: right; q1 keyed 1,3: one of two right (loose 0.5); q2: no boxed picks, no "answer:" phrase
    assert per_sample(log) == {("q0", 1): ("C", "1,2", "ok"), ("q1", 1): ("I", "1,2", "ok"),
                               ("q2", 1): ("I", "", "unparsed")}  # fmt: skip
    assert {s.id: s.scores["hybrid_tight"].metadata["loose"] for s in log.samples} == {"q0": 1.0, "q1": 0.5, "q2": 0.0}
    with Store(db) as st:
        [run] = st.runs()
        assert (run["kind"], run["status"]) == ("eval.hybrid", "finished")
        assert loads(run["summary"])["score"] == {"value": 0.3333, "ci95": [0.0615, 0.7923], "n": 3, "errors": 0,
                                                  "method": "wilson"}  # fmt: skip
    assert store_runs() == []  # -T db= chose the store: nothing in the default one
    port = free_port()
    view = subprocess.Popen([INSPECT, "view", "--log-dir", str(tmp_path / "logs"), "--host", "127.0.0.1", "--port",
                             str(port)], env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/api"
        [listed] = get_json(f"{base}/logs", time.monotonic() + 60)["files"]
        shown = get_json(f"{base}/logs/{urllib.parse.quote(listed['name'], safe=':/')}", time.monotonic() + 30)
    finally:
        view.terminate()
        view.wait(timeout=30)
    assert shown["eval"]["task"] == "theorembench/hybrid"
    assert shown["results"]["scores"][0]["metrics"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert {s["id"]: s["scores"]["hybrid_tight"]["value"] for s in shown["samples"]} == {"q0": "C", "q1": "I", "q2": "I"}


# -- EternalMath ---------------------------------------------------------------------------------------------------


def instance(iid: str, value: str, kind: str) -> dict:
    return {"template_id": "t_demo", "instance_id": f"t_demo#{iid}", "problem": f"PROBLEM-{iid}: compute the value.",
            "solution_steps": "By the theorem.", "numerical_value": value, "exact_expression": "",
            "answer_kind": kind, "msc": ["05"], "tier": "hard", "paper_id": None}  # fmt: skip


def test_eternal_task_grades_through_the_answer_checker(fake_env, tmp_path):
    path = tmp_path / "instances.jsonl"
    rows = [instance("a", "12", "integer"), instance("b", "12", "integer"), instance("c", "1/2", "rational")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fake_env.set_script({"rules": [{"match": "PROBLEM-a:", "reply": "So the value is \\boxed{12}."},
                                   {"match": "PROBLEM-b:", "reply": "So the value is \\boxed{13}."},
                                   {"match": "PROBLEM-c:", "reply": "Therefore \\boxed{\\frac{2}{4}}."}]})  # fmt: skip
    res = inspect("eval", "theorembench/eternal", "-T", f"file={path}", "--model", "openai-api/fake/m", "--log-dir",
                  str(tmp_path / "logs"), "--display", "none")  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    log = only_log(tmp_path / "logs")
    values = {k: v[0] for k, v in per_sample(log).items()}
    assert values == {("t_demo#a", 1): "C", ("t_demo#b", 1): "I", ("t_demo#c", 1): "C"}  # 2/4 is 1/2: equivalent
    assert {s.scores["final_answer"].metadata["checker_version"] for s in log.samples} == {"2"}
    assert [s.metadata["tier"] for s in log.samples] == ["hard"] * 3
    [run] = store_runs()
    assert (run["kind"], run["status"], run["score"]["value"], run["score"]["n"]) == ("eternal.eval", "finished",
                                                                                      0.6667, 3)  # fmt: skip


# -- IMProofBench ----------------------------------------------------------------------------------------------------


def test_improof_task_runs_the_single_turn_harness_and_records_its_answers(improof_store, fake_env, tmp_path):
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": "Summing up, \\boxed{101}."},
        {"match": "SUB-ONE", "reply": "1 + 3 + 5, so the answer is \\boxed{9}"},
        {"match": "MAIN-Q", "reply": "By induction on n ..."},
    ]})  # fmt: skip
    res = inspect("eval", "theorembench/improof", "--epochs", "2", "--model", "openai-api/fake/m", "--log-dir",
                  str(tmp_path / "logs"), "--display", "none")  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(fake_env.requests) == 6 and all(not r["tools"] for r in fake_env.requests)  # 3 stages x 2 epochs
    log = only_log(tmp_path / "logs")
    # subquestion 1 (1 point) right, subquestion 2 (2 points) wrong: 1/3 in both epochs
    scores = {k: v for k, v in per_sample(log).items()}
    assert scores == {("odd-sums", 1): (pytest.approx(1 / 3), "By induction on n ...", "ok"),
                      ("odd-sums", 2): (pytest.approx(1 / 3), "By induction on n ...", "ok")}  # fmt: skip
    [run] = store_runs()
    assert (run["kind"], run["status"], run["score"]["n"], run["score"]["method"]) == ("improof.eval", "finished", 2,
                                                                                       "wilson-mean")  # fmt: skip
    answers = list_answers(improof_store, run_id=run["id"])
    assert sorted((a["epoch"], a["mode"], a["sub_answers"][0], a["sub_answers"][1]) for a in answers) == [
        (1, "single-turn", "9", "101"), (2, "single-turn", "9", "101")]  # fmt: skip
    assert {s.scores["improof_weighted_score"].metadata["answer_id"] for s in log.samples} == {a["id"] for a in answers}
