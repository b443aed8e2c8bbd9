"""The embedded default model (SmolLM2-135M under llama.cpp). Formats only: it gets maths wrong."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.llm import LLM, GenerateSettings
from theorembench.llm.local import LocalServer, ensure_local, healthy, model_path, stop_private_servers
from theorembench.store import Store

pytestmark = pytest.mark.embedded


@pytest.fixture(scope="session")
def shared_local(tmp_path_factory):
    """One shared llama.cpp server for this module's tests (the `theorembench local start` path)."""
    try:
        model_path("smollm2")
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"embedded model missing: {exc}")
    runtime = tmp_path_factory.mktemp("runtime")
    old = os.environ.get("THEOREMBENCH_RUNTIME")
    os.environ["THEOREMBENCH_RUNTIME"] = str(runtime)
    server = LocalServer("smollm2")
    state = server.start_shared()
    yield state
    server.stop_shared()
    if old is None:
        os.environ.pop("THEOREMBENCH_RUNTIME", None)
    else:
        os.environ["THEOREMBENCH_RUNTIME"] = old


def test_model_file_ships_in_the_wheel():
    path = model_path("smollm2")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000
    with open(path, "rb") as fh:
        assert fh.read(4) == b"GGUF"


def test_shared_server_is_reused(shared_local):
    assert healthy(shared_local["base_url"])
    again = LocalServer("smollm2").start_shared()
    assert again["reused"] and again["pid"] == shared_local["pid"]
    assert ensure_local("smollm2") == shared_local["base_url"]


def test_private_server_starts_and_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("THEOREMBENCH_RUNTIME", str(tmp_path / "private"))
    url = ensure_local("smollm2")
    assert healthy(url)
    stop_private_servers()
    assert not healthy(url, timeout=1.0)


def test_eval_mcq_on_released_split(shared_local, lmb_hard, tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["eval", "mcq", str(lmb_hard), "--model", "local/smollm2", "--limit", "2",
                                   "--max-tokens", "48", "--temperature", "0", "--out", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["test_info"]["model"] == "local/smollm2" and data["test_info"]["total_tested"] == 2
    for rec in data["detailed_results"]:
        assert rec["error"] is None
        assert rec["model_answer"] in (None, "A", "B", "C", "D", "E")
        assert rec["status"] == ("ok" if rec["model_answer"] else "unparsed")
        assert rec["raw_response"]
        assert rec["prompt_tokens"] > 300 and 0 < rec["completion_tokens"] <= 48
        assert rec["cost_usd"] == 0.0


def test_structured_output_is_schema_valid(shared_local, tmp_path):
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": ["A", "B", "C", "D", "E"]},
                       "confidence": {"type": "integer", "minimum": 0, "maximum": 100}},
        "required": ["label", "confidence"],
    }  # fmt: skip
    msgs = [{"role": "user", "content": "Pick one option among A-E and give a confidence. Reply in JSON."}]

    async def go():
        llm = LLM(Store(tmp_path / "s.db"))
        try:
            return await llm.generate_json("local/smollm2", msgs, schema, GenerateSettings(max_tokens=40, temperature=0))
        finally:
            await llm.aclose()

    obj, completions = asyncio.run(go())
    assert obj["label"] in "ABCDE" and 0 <= obj["confidence"] <= 100
    assert completions[0].prompt_tokens > 0


def test_lmb_chain_on_the_embedded_model(shared_local, tmp_path):
    """One sample paper through every LMB stage on local/smollm2, then `eval mcq` on what it built.

    The tiny model often writes placeholder distractors ("<false>"), and whether it does
    depends on the CPU llama.cpp was built for; so this checks the machinery on the real
    model (every stage ran, stored an outcome with the calls that made it, the splits were
    written in the released layout), not that this model writes a usable item. Items built
    from valid replies are checked against the fake server in test_lmb_build.py.
    """
    from importlib import resources

    from theorembench.evaluate.mcq.items import load_dataset

    paper = str(resources.files("theorembench.data") / "papers" / "derangements")
    res = CliRunner().invoke(app, ["papers", "add", paper, "--no-llm"])
    assert res.exit_code == 0, res.output
    paper_id = res.output.split()[0]
    cfg = tmp_path / "lmb.toml"
    cfg.write_text(
        "[generation]\nmax_tokens = 400\nred_flag_checks = false\n"
        "[filters]\nrubric_min = 0\nstem_only = false\n"
        "[surface]\nmin_length_ratio = 0.0\nmax_length_ratio = 100.0\nmax_latex_density_gap = 1.0\nrevisions = 0\n"
        "[calibration]\nmax_tokens = 200\n"
    )
    args = ["lmb", "build", "--month", "2026-11", "--paper", paper_id, "--config", str(cfg),
            "--generator", "local/smollm2", "--out-dir", str(tmp_path / "out"), "--concurrency", "1"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["funnel"]["theorems"] == 1
    with Store(tmp_path / "home" / "theorembench.db") as store:
        rows = store.fetch(sa.text("SELECT key, stage, status, call_ids FROM steps"))
    steps = {(r["key"], r["stage"]): (r["status"], json.loads(r["call_ids"])) for r in rows}
    for stage in ("sketch", "classify", "stem"):  # the shared stages: the model's replies are schema-valid
        status, calls = steps[(paper_id, stage)]
        assert status == "ok" and calls, (stage, status)
    variants = {key for key, stage in steps if stage == "distractors"}
    orig, alt = f"{paper_id}::orig", f"{paper_id}::alt1"
    # the paper's order: the original set first; an alternative set only for an item that passed
    # the rubric and the stem-only filter (both off here), so only when the original set was made
    assert orig in variants
    assert variants == ({orig, alt} if steps[(orig, "distractors")][0] == "ok" else {orig})
    if alt in variants:  # made after the original: its model calls come later in the ledger
        assert min(steps[(alt, "distractors")][1]) > max(steps[(orig, "distractors")][1])
    for key in variants:
        status, calls = steps[(key, "distractors")]
        assert status in ("ok", "rejected", "failed") and calls
    full = json.loads((tmp_path / "out" / "qaEval_202611_full.json").read_text())
    assert len(full) == summary["funnel"]["generated"]
    for item in full:
        assert [c["label"] for c in item["mcq"]["choices"]] == ["B", "C", "D", "E"]
        assert item["sketch"] and item["theorem_type"] and item["call_ids"]
    split = tmp_path / "out" / "qaEval_202611_full.json"
    if not full:  # as the demo does, evaluate the shipped sample items instead
        split = Path(str(resources.files("theorembench.data") / "demo_mcq.json"))
    items = load_dataset(split).items
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["eval", "mcq", str(split), "--model", "local/smollm2", "--max-tokens", "32",
                                   "--limit", "2", "--out", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["summary"]["all"]["total"] == min(2, len(items))


def test_default_server_skips_prompt_logits_and_says_so(shared_local, tmp_path):
    """The default server is started without logits for every prompt token (faster, a third of the memory);
    perplexity scoring asks for a server with them and gets a clear error from one without."""
    from theorembench.llm import ModelSpec
    from theorembench.methods.hybrid.perplexity import PerplexityUnsupported, option_perplexities

    spec = ModelSpec("llama-cpp-python/smollm2", "llama-cpp-python", "smollm2", base_url=shared_local["base_url"])
    with Store(tmp_path / "ppl.db") as store, pytest.raises(PerplexityUnsupported, match="logits_all"):
        asyncio.run(option_perplexities(LLM(store), spec, "Prefix. ", ["one option"], bos_text=""))


def test_eternal_demo_chain_on_the_embedded_model(shared_local, tmp_path):
    """The demo's EternalMath step on one sample paper: build, the shipped template verified, evaluation.

    The embedded model's own templates may all be rejected (an honest outcome); the shipped
    derangements template always gives verified instances, which the model is then scored on.
    """
    from importlib import resources

    from theorembench.cli.demo import run_eternal_demo
    from theorembench.suite.demo import DemoSettings

    shipped_count = DemoSettings().eternal_shipped_instances

    paper = str(resources.files("theorembench.data") / "papers" / "derangements")
    res = CliRunner().invoke(app, ["papers", "add", paper, "--no-llm"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "eternal"
    run_eternal_demo([res.output.split()[0]], model="local/smollm2", out_dir=out, max_tokens=200, db=None)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["funnel"]["papers"] == 1 and summary["funnel"]["recent"] == 1  # a local paper passes the filter
    shipped = [json.loads(line) for line in (out / "shipped" / "instances.jsonl").read_text().splitlines()]
    assert len(shipped) == shipped_count
    for row in shipped:  # D(n) by the inclusion-exclusion sum, computed here independently of the template's recurrence
        n = row["params_used"]["n"]
        import math

        assert int(row["numerical_value"]) == sum((-1) ** k * math.factorial(n) // math.factorial(k) for k in range(n + 1))
        assert "seccomp" in row["execution"]["isolation"]
    results = json.loads((out / "eval" / "results_local_smollm2.json").read_text())
    overall = results["summary"]["overall"]
    assert overall["n"] + results["summary"]["failed_samples"] >= shipped_count
    assert (out / "eval" / "report.md").is_file()


def test_improof_demo_chain_on_the_embedded_model(shared_local, tmp_path):
    """The demo's IMProofBench step: shipped problems, agentic and single-turn runs, auto-grades, statistics."""
    from theorembench.cli.demo import run_improof_demo
    from theorembench.methods.improof.answers import list_answers
    from theorembench.methods.improof.autograde import effective_verdicts

    out = tmp_path / "improof"
    run_improof_demo(model="local/smollm2", out_dir=out, db=None)
    with Store(os.environ["THEOREMBENCH_HOME"] + "/theorembench.db") as store:
        answers = list_answers(store)
        assert sorted((a["problem_id"], a["mode"]) for a in answers) == sorted(
            (p, m) for p in ("binomial-reciprocals", "spanning-trees-kmn", "stable-graphs")
            for m in ("agentic", "single-turn"))  # fmt: skip
        for a in answers:  # every subquestion has a verdict (the tiny model's answers are wrong or missing)
            verdicts = effective_verdicts(store, a["id"])
            assert len(verdicts) == len(a["sub_answers"]) and all(v["source"] != "ungraded" for v in verdicts)
    for mode in ("agentic", "single-turn"):
        [path] = out.glob(f"results_local_smollm2_{mode}_*.json")  # keyed by the run's settings digest
        doc = json.loads(path.read_text())
        assert doc["summary"]["incomplete"] == 0
    stats = json.loads((out / "stats" / "stats.json").read_text())
    assert set(stats["models"]) == {"local/smollm2", "local/smollm2 (single-turn)"}
    assert (out / "stats" / "report.md").is_file()
    # the demo's last step: the platform over the same store, with demo accounts and blind grading assignments
    from fastapi.testclient import TestClient
    from helpers.web import sign_in

    from theorembench.cli.demo import run_platform_demo
    from theorembench.web.app import create_app

    run_platform_demo(out_dir=out, db=None)
    accounts = out / "platform_accounts.txt"
    assert accounts.stat().st_mode & 0o777 == 0o600
    (admin, admin_password), (grader, grader_password) = [line.split()[1:3] for line in
                                                          accounts.read_text().splitlines()]  # fmt: skip
    app = create_app(None, secret_key="demo test", workers=0)
    try:
        client = TestClient(app)
        assert sign_in(client, grader, grader_password).status_code == 303
        listing = client.get("/grade").text
        for pid in ("binomial-reciprocals", "spanning-trees-kmn", "stable-graphs"):
            assert f"/grade/{pid}" in listing
            page = client.get(f"/grade/{pid}")
            tabs = re.findall(r'data-testid="answer-tab-([A-Z]+)"', page.text)  # names drawn at random
            # the agentic answer only: single-turn answers are not for human graders (the paper's §3)
            assert page.status_code == 200 and len(tabs) == 1
            assert "smollm2" not in page.text  # blind until graded
        admin_client = TestClient(app)
        assert sign_in(admin_client, admin, admin_password).status_code == 303
        assert admin_client.get("/admin/grading").status_code == 200
    finally:
        app.state.store.close()
