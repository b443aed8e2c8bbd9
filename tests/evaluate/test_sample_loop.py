"""The one sample loop (evaluate/samples.py): resume, concurrency, progress, the failure rule, one result shape."""

from __future__ import annotations

import asyncio
import math

from theorembench.evaluate.samples import Sample, Scored, counts, headline, log_samples, run_samples
from theorembench.llm import LLM, GenerateSettings
from theorembench.pipeline.steps import StepRunner
from theorembench.store import Store

MODEL = "openai-api/fake/m1"
QUESTIONS = {"q-right": "4", "q-wrong": "4", "q-refused": "4", "q-busy": "4", "q-mute": "4"}


class Arithmetic:
    """A toy method: ask a question, read the last word as the answer, compare it with the key."""

    def __init__(self, llm: LLM):
        self.llm = llm
        self.asked: list[str] = []

    def key(self, sample: Sample) -> str:
        return f"{sample.id}#{sample.epoch}"

    def target(self, sample: Sample) -> str:
        return QUESTIONS[sample.id]

    async def ask(self, sample: Sample) -> dict:
        self.asked.append(sample.id)
        reply = await self.llm.generate(MODEL, [{"role": "user", "content": f"{sample.id}: what is 2+2?"}],
                                        GenerateSettings(max_retries=0), purpose="toy")  # fmt: skip
        return {"text": reply.text}

    def score(self, sample: Sample, output: dict) -> Scored:
        words = output["text"].split()
        answer = words[-1] if words and words[-1].isdigit() else None
        status = "ok" if answer else "unparsed"
        return Scored(sample, status, float(answer == self.target(sample)), self.target(sample), answer=answer)


def script(fake) -> None:
    fake.set_script({"rules": [
        {"match": "q-right", "reply": "it is 4"},
        {"match": "q-wrong", "reply": "it is 5"},
        {"match": "q-refused", "faults": [{"kind": "400", "times": 99, "message": "prompt is too long"}]},
        {"match": "q-busy", "faults": [{"kind": "503", "times": 1}], "reply": "it is 4"},
        {"match": "q-mute", "reply": "no idea"},
    ]})  # fmt: skip


def evaluate(store: Store, seen: list[tuple[int, int]] | None = None) -> tuple[list[Scored], Arithmetic]:
    async def go():
        llm = LLM(store)
        task = Arithmetic(llm)
        try:
            samples = [Sample(i, qid) for i, qid in enumerate(QUESTIONS)]
            return await run_samples(StepRunner(store, "toy/1"), task, samples, concurrency=2,
                                     progress=(lambda d, t: seen.append((d, t))) if seen is not None else None), task
        finally:
            await llm.aclose()

    return asyncio.run(go())


def test_every_sample_counts_and_the_failure_rule_holds(fake_env, tmp_path):
    script(fake_env)
    seen: list[tuple[int, int]] = []
    with Store(tmp_path / "s.db") as store:
        scored, task = evaluate(store, seen)
        by_id = {s.sample.id: s for s in scored}
        assert [s.sample.id for s in scored] == list(QUESTIONS)  # in the order given
        assert {k: s.status for k, s in by_id.items()} == {"q-right": "ok", "q-wrong": "ok", "q-refused": "error",
                                                           "q-busy": "pending", "q-mute": "unparsed"}
        assert [k for k, s in by_id.items() if s.correct] == ["q-right"]
        assert "prompt is too long" in by_id["q-refused"].error and by_id["q-refused"].value == 0.0
        assert sorted(seen) == [(d, 5) for d in range(1, 6)]
        assert counts(scored) == {"ok": 2, "unparsed": 1, "error": 1, "pending": 1}
        # the headline: 1 of 5, every sample in n, the refused one under errors; Wilson's interval by hand
        est = headline(scored)
        z, n, p = 1.959964, 5, 0.2
        centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        assert (est.value, est.n, est.errors) == (0.2, 5, 1)
        assert abs(est.low - (centre - half)) < 1e-4 and abs(est.high - (centre + half)) < 1e-4

        # a rerun asks only the sample whose call failed transiently; the refused one is final
        served = fake_env.stats()["total_requests"]
        again, task = evaluate(store)
        assert task.asked == ["q-busy"] and fake_env.stats()["total_requests"] == served + 1
        assert {s.sample.id: s.status for s in again}["q-busy"] == "ok" and headline(again).value == 0.4


def test_the_inspect_log_samples_carry_scores_and_errors(fake_env, tmp_path):
    script(fake_env)
    with Store(tmp_path / "s.db") as store:
        scored, _ = evaluate(store)
    logged = log_samples(scored, messages=lambda s: [{"role": "user", "content": s.id}],
                         completion=lambda s: f"reply to {s.sample.id}")  # fmt: skip
    by_id = {s.id: s for s in logged}
    assert by_id["q-right"].score_value == "C" and by_id["q-wrong"].score_value == "I" and by_id["q-right"].error is None
    assert by_id["q-refused"].error and "prompt is too long" in by_id["q-refused"].error
    graded = log_samples(scored, messages=lambda s: [], completion=lambda s: "", binary=False)
    assert [g.score_value for g in graded] == [1.0, 0.0, 0.0, 0.0, 0.0]
