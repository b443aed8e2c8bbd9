"""The step runner over the store, on SQLite and PostgreSQL: outcomes, reasons and call ids are kept; only failed steps run again.

Unusable replies are counted across runs (an ask and its repair turns count one each); past the
limit the step is rejected (final) until ``theorembench store retry``; transport failures run again without limit.
"""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from theorembench.cli.app import app
from theorembench.common.errors import UserError
from theorembench.llm import LLM, GenerateSettings
from theorembench.pipeline.steps import MalformedOutput, Rejected, StepFailed, StepRunner
from theorembench.store import Store
from theorembench.store.steps import Steps

MODEL = "openai-api/fake/m1"


def test_step_runner_stores_outcomes_and_reruns_only_failed_steps(db_url, fake_env):
    fake_env.set_script({"rules": [{"match": "broken", "reply": "x", "faults": [{"kind": "500", "times": 99}]}],
                         "default": {"reply": "fine"}})  # fmt: skip
    runs: dict[str, int] = {}

    def stage(name: str, outcome: str):
        async def fn():
            runs[name] = runs.get(name, 0) + 1
            reply = await llm.generate(MODEL, [{"role": "user", "content": f"{name} {runs[name]}"}],
                                       GenerateSettings(max_retries=0), purpose=name)  # fmt: skip
            if outcome == "rejected":
                raise Rejected(f"judge rejected {name}")
            if outcome == "failed":
                raise StepFailed(f"{name}: try again")
            if outcome == "broken":
                await llm.generate(MODEL, [{"role": "user", "content": "broken"}], GenerateSettings(max_retries=0))
            return {"text": reply.text}

        return fn

    plan = {"a": "ok", "b": "rejected", "c": "failed", "d": "broken"}

    async def build(runner: StepRunner) -> dict:
        return {k: await runner.run(k, "stage", stage(k, outcome)) for k, outcome in plan.items()}

    with Store(db_url) as store:
        llm = LLM(store, use_cache=False)
        seen: list[tuple[str, str, str]] = []
        first = asyncio.run(build(StepRunner(store, "pipe", on_step=lambda *a: seen.append(a))))
        asyncio.run(llm.aclose())
        assert {k: r.status for k, r in first.items()} == {"a": "ok", "b": "rejected", "c": "failed", "d": "failed"}
        assert first["a"].output == {"text": "fine"} and first["b"].reason == "judge rejected b"
        assert first["c"].reason == "c: try again" and "model call failed" in first["d"].reason
        assert [len(first[k].call_ids) for k in "abcd"] == [1, 1, 1, 2]
        assert seen == [(k, "stage", first[k].status) for k in "abcd"]
        for key, result in first.items():  # what the store holds, with the calls behind each outcome
            stored = Steps(store, "pipe").get(key, "stage")
            assert (stored.status, stored.reason, stored.call_ids) == (result.status, result.reason, result.call_ids)
            assert all(store.get_call(i) is not None for i in stored.call_ids)
        assert store.get_call(first["d"].call_ids[-1])["status"] == "error"

    plan.update(c="ok", d="ok")  # the next invocation: a new process, the same store
    with Store(db_url) as store:
        llm = LLM(store, use_cache=False)
        second = asyncio.run(build(StepRunner(store, "pipe")))
        asyncio.run(llm.aclose())
        assert runs == {"a": 1, "b": 1, "c": 2, "d": 2}  # final steps were not run again
        assert second["a"].cached and second["b"].cached and second["b"].reason == "judge rejected b"
        assert second["c"].status == second["d"].status == "ok" and not second["c"].cached
        assert Steps(store, "pipe").get("c", "stage").output == {"text": "fine"}
        assert store.usage()["calls"] == 7


def test_a_model_call_refused_for_good_is_final_and_a_transient_one_runs_again(fake_env, tmp_path):
    """A 400 cannot be cured by asking again: rejected (final). A 429 after the retries: failed (runs again)."""
    fake_env.set_script({"rules": [
        {"match": "too-long", "faults": [{"kind": "400", "times": 99, "message": "prompt is too long"}]},
        {"match": "busy", "faults": [{"kind": "429", "times": 1}]},
        {"match": "no-key", "faults": [{"kind": "401", "times": 99}]}],
        "default": {"reply": "fine"}})  # fmt: skip

    def stage(text: str):
        async def fn():
            reply = await llm.generate(MODEL, [{"role": "user", "content": text}], GenerateSettings(max_retries=0))
            return {"text": reply.text}

        return fn

    async def build(runner: StepRunner) -> dict:
        return {k: await runner.run(k, "stage", stage(k)) for k in ("too-long", "busy", "no-key")}

    with Store(tmp_path / "s.db") as store:
        llm = LLM(store, use_cache=False)
        first = asyncio.run(build(StepRunner(store, "pipe")))
        asyncio.run(llm.aclose())
        assert {k: r.status for k, r in first.items()} == {"too-long": "rejected", "busy": "failed", "no-key": "failed"}
        assert "model call failed for good" in first["too-long"].reason and "HTTP 400" in first["too-long"].reason
        # a wrong key is the endpoint's fault, not the sample's: fixed settings must be able to run it again
        assert "for good" not in first["no-key"].reason
        requests = len(fake_env.requests)
        llm = LLM(store, use_cache=False)
        second = asyncio.run(build(StepRunner(store, "pipe")))
        asyncio.run(llm.aclose())
        assert second["too-long"].status == "rejected" and second["busy"].status == "ok"
        # asked again: the 429 (now answered) and the 401; the 400 never again
        assert [r["body"]["messages"][-1]["content"] for r in fake_env.requests[requests:]] == ["busy", "no-key"]


# -- the model's own output: a bounded number of attempts, then final until `store retry` ------------

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
PROSE = "I would rather explain it in words."  # no JSON value in it, on every ask and repair turn


@pytest.fixture(autouse=True)
def default_output_limit(monkeypatch):
    monkeypatch.delenv("THEOREMBENCH_MAX_OUTPUT_ATTEMPTS", raising=False)  # the default (2) unless a test sets it


def json_stage(store: Store, prompt: str):
    """A stage asking for JSON with the default bounded repairs (1 ask + 2 repair turns), the response cache on."""

    async def fn():
        llm = LLM(store)
        try:
            value, _ = await llm.generate_json(MODEL, [{"role": "user", "content": prompt}], SCHEMA,
                                               GenerateSettings(temperature=0, max_retries=0))  # fmt: skip
        finally:
            await llm.aclose()
        return value

    return fn


def run_once(store: Store, pipeline: str, key: str, stage: str, fn, **kwargs):
    return asyncio.run(StepRunner(store, pipeline, **kwargs).run(key, stage, fn))


def test_a_reply_that_stays_malformed_through_its_repairs_is_final_and_a_rerun_costs_nothing(fake_env, tmp_path):
    fake_env.set_script({"default": {"reply": PROSE}})
    with Store(tmp_path / "s.db") as store:
        first = run_once(store, "pipe", "k", "extract", json_stage(store, "extract k"))
        # an ask and its two repair turns, each unusable: three attempts, past the default limit of two
        assert len(fake_env.requests) == 3 and len(first.call_ids) == 3
        assert first.status == "rejected" and first.cause == "output" and first.output_attempts == 3
        assert "output was malformed" in first.reason and "in 3 attempts" in first.reason
        assert "no JSON value" in first.reason
        stored = Steps(store, "pipe").get("k", "extract")
        assert (stored.status, stored.output_attempts, stored.cause) == ("rejected", 3, "output")
        again = run_once(store, "pipe", "k", "extract", json_stage(store, "extract k"))
        assert len(fake_env.requests) == 3  # final: a rerun does not ask the model
        assert again.cached and again.status == "rejected" and again.reason == first.reason


def test_unusable_replies_are_counted_across_runs(fake_env, tmp_path):
    tries: list[str] = []

    async def unusable():
        tries.append("k")
        raise MalformedOutput("the reply named no option")  # a stage's own check of the model's one reply

    with Store(tmp_path / "s.db") as store:
        first = run_once(store, "pipe", "k", "pick", unusable)
        assert (first.status, first.output_attempts) == ("failed", 1) and "attempt 1 of 2" in first.reason
        second = run_once(store, "pipe", "k", "pick", unusable)  # the count survives from the first run
        assert (second.status, second.output_attempts, second.cause) == ("rejected", 2, "output")
        assert run_once(store, "pipe", "k", "pick", unusable).status == "rejected" and len(tries) == 2


def test_the_limit_comes_from_the_argument_or_the_environment(fake_env, tmp_path, monkeypatch):
    fake_env.set_script({"default": {"reply": PROSE}})
    tries: list[str] = []

    async def unusable():
        tries.append("c")
        raise MalformedOutput("the reply named no option")

    with Store(tmp_path / "s.db") as store:
        monkeypatch.setenv("THEOREMBENCH_MAX_OUTPUT_ATTEMPTS", "5")
        once = run_once(store, "pipe", "a", "extract", json_stage(store, "extract a"))
        assert once.status == "failed" and "attempt 3 of 5" in once.reason and len(fake_env.requests) == 3
        results = [run_once(store, "pipe", "c", "pick", unusable, max_output_attempts=3).status for _ in range(4)]
        assert results == ["failed", "failed", "rejected", "rejected"] and len(tries) == 3  # the argument wins
        monkeypatch.setenv("THEOREMBENCH_MAX_OUTPUT_ATTEMPTS", "none")
        with pytest.raises(UserError, match="THEOREMBENCH_MAX_OUTPUT_ATTEMPTS"):
            StepRunner(store, "pipe")


def test_transport_failures_stay_failed_and_do_not_count_toward_the_output_limit(fake_env, tmp_path):
    with Store(tmp_path / "s.db") as store:
        fake_env.set_script({"default": {"reply": PROSE, "faults": [{"kind": "503", "times": 999}]}})
        for n in range(1, 6):  # every rerun asks again and stays failed, however many there are
            before = len(fake_env.requests)
            result = run_once(store, "pipe", "k", "extract", json_stage(store, "extract k"))
            assert len(fake_env.requests) == before + 1, n
            assert result.status == "failed" and "model call failed" in result.reason and result.cause is None
            assert result.output_attempts == 0  # no unusable reply on record
        fake_env.set_script({"default": {"reply": PROSE}})
        before = len(fake_env.requests)
        last = run_once(store, "pipe", "k", "extract", json_stage(store, "extract k"))
        assert last.status == "rejected" and "in 3 attempts" in last.reason and len(fake_env.requests) == before + 3


def test_store_retry_resets_only_the_output_rejections_and_the_next_run_asks_again(db_url, fake_env):
    fake_env.set_script({"default": {"reply": PROSE}})

    async def judged():
        raise Rejected("the judge found the statement false")

    with Store(db_url) as store:
        for pipeline, stage in [("eternal/templates", "extract"), ("eternal/templates", "classify"),
                                ("lmb/distractors", "extract")]:  # fmt: skip
            run_once(store, pipeline, "k", stage, json_stage(store, f"{pipeline} {stage}"))
        run_once(store, "eternal/templates", "k2", "judge", judged)
        rejected = {(p, s) for p in ("eternal/templates", "lmb/distractors") for _, s, r in Steps(store, p).all()
                    if r.status == "rejected"}  # fmt: skip
        assert rejected == {("eternal/templates", "extract"), ("eternal/templates", "classify"),
                            ("lmb/distractors", "extract"), ("eternal/templates", "judge")}  # fmt: skip

        cli = CliRunner()
        result = cli.invoke(app, ["store", "retry", "--db", db_url, "--pipeline", "eternal/", "--stage", "extract"])
        assert result.exit_code == 0, result.output
        assert "reset 1 step " in result.output
        reset = Steps(store, "eternal/templates").get("k", "extract")
        assert (reset.status, reset.output_attempts) == ("failed", 0) and "retry requested" in reset.reason
        assert Steps(store, "eternal/templates").get("k", "classify").status == "rejected"  # another stage
        assert Steps(store, "lmb/distractors").get("k", "extract").status == "rejected"  # another pipeline
        rest = cli.invoke(app, ["store", "retry", "--db", db_url])
        assert rest.exit_code == 0 and "reset 2 steps" in rest.output
        assert Steps(store, "eternal/templates").get("k2", "judge").status == "rejected"  # a judge's verdict stays
        again = cli.invoke(app, ["store", "retry", "--db", db_url])
        assert again.exit_code == 0 and "reset 0 steps" in again.output

        fake_env.set_script({"default": {"reply": '{"answer": 42}'}})
        before = len(fake_env.requests)
        ok = run_once(store, "eternal/templates", "k", "extract", json_stage(store, "eternal/templates extract"))
        assert len(fake_env.requests) == before + 1 and ok.status == "ok" and ok.output == {"answer": 42}
