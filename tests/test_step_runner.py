"""The step runner over the store, on SQLite and PostgreSQL: outcomes, reasons and call ids are kept; only failed steps run again."""

from __future__ import annotations

import asyncio

from theorembench.llm import LLM, GenerateSettings
from theorembench.pipeline.steps import Rejected, StepFailed, StepRunner
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
