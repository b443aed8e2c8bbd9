"""theorembench's evaluations as Inspect AI tasks: ``inspect eval theorembench/<task> -T file=... --model ...``.

Inspect finds them through the ``inspect_ai`` entry point named ``theorembench`` (pyproject.toml), the package
prefix of their names: ``theorembench/lmb_mcq``, ``theorembench/hybrid``, ``theorembench/eternal`` and
``theorembench/improof``. Importing this module also registers the ``theorembench`` sandbox environment, which
that entry point registered before the tasks were added.

Each task is built from its method's own sample definitions: the items its evaluation service loads, the very
messages the core sends for each (as the sample's input), the expected answer (target), the item id and its
position (metadata); the solver is Inspect's ``generate()`` (IMProofBench: the harness's staged conversation,
single-turn); the scorer is the method's own scoring function behind an Inspect ``@scorer``, with accuracy (or
the mean) and its standard error. ``inspect eval-set`` runs them over many models; ``inspect view`` shows their
logs. Each run is also recorded in the theorembench store (``-T db=``, default the default store) as a run of
the method's kind, so ``theorembench store runs`` lists it (:mod:`theorembench.evaluate.inspect_record`).

What differs from ``theorembench eval ...``: the model is Inspect's (``--model openai/gpt-5``; the prefix
``theorembench/`` sends every call through theorembench's LLM layer), sampling settings and ``--limit``,
``--epochs`` are Inspect's, nothing is resumed from stored steps (IMProofBench replays its stored turns, as
its harness does), and no results file or scorecard is written: the log and the store's run are the results.
The module imports the methods only inside the tasks, so loading the entry point stays cheap.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task, task

import theorembench.sandbox.inspect_env  # noqa: F401 - registers the `theorembench` sandbox environment

LMB_MAX_TOKENS = 16384  # what `theorembench eval mcq` sends unless told otherwise (MCQOptions.max_tokens)


def _one_line(make: Callable[..., Task]) -> Callable[..., Task]:
    """A task whose bad input (a UserError: a missing file, an unknown setting) stops ``inspect eval`` with the one
    line naming what to fix, as Inspect prints its own prerequisite errors, instead of a traceback."""

    @functools.wraps(make)
    def made(*args: Any, **kwargs: Any) -> Task:
        from theorembench.common.errors import UserError

        try:
            return make(*args, **kwargs)
        except UserError as exc:
            from inspect_ai._util.error import PrerequisiteError

            raise PrerequisiteError(f"theorembench/{make.__name__}: {exc}") from None

    return made


def chat(messages: list[dict[str, str]]) -> list[Any]:
    """The core's messages (role and content) as Inspect's chat messages."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def _scorer(name: str, judge: Any, *, binary: bool = True) -> Any:
    """An Inspect scorer named ``name`` over ``judge(state, target) -> (Scored, extra metadata)``: the method's own
    verdict of the sample, as :func:`~theorembench.evaluate.inspect_record.score_of` turns it into a Score."""
    from inspect_ai.scorer import accuracy, mean, scorer, stderr

    from theorembench.evaluate.inspect_record import score_of

    @scorer(metrics=[accuracy() if binary else mean(), stderr()], name=name)
    def make() -> Any:
        async def score(state: Any, target: Any) -> Any:
            scored, extra = await judge(state, target)
            return score_of(scored, binary=binary, metadata={"item_id": scored.sample.id,
                                                             "index": scored.sample.index, **extra})  # fmt: skip

        return score

    return make()


def _at(state: Any) -> Any:
    """The core's sample of an Inspect sample: its position in the items file, its id, its epoch (from 0)."""
    from theorembench.evaluate.samples import Sample

    return Sample(int(state.metadata["index"]), str(state.metadata["item_id"]), int(state.epoch) - 1)


def _db(db: str | Path | None) -> str | None:
    return str(db) if db not in (None, "") else None


@task
@_one_line
def lmb_mcq(file: str, with_sketch: bool = False, seed: int = 42, prompt_style: str = "released",
            db: str | None = None) -> Task:  # fmt: skip
    """LiveMathematicianBench's released multiple-choice protocol on one items file.

    ``file``: a released LMB items file (JSON list or JSONL, e.g. qaEval_202511_ge5_hard.json), as
    ``theorembench eval mcq`` takes it; ``with_sketch``: the proof sketch as a hint (mode 2); ``seed``: the option
    shuffle's seed (item i uses seed + i, its position in the file, whatever ``--limit`` keeps); ``prompt_style``:
    released or clean; ``db``: the store the run goes to (default: the default store). Scored by the protocol's
    answer extraction (last \\boxed{X}, a one-letter reply, the last standalone letter) against the keyed label.
    """
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import GenerateConfig

    from theorembench.common.errors import InvalidSetting
    from theorembench.evaluate.inspect_record import open_task
    from theorembench.evaluate.mcq import protocol
    from theorembench.evaluate.mcq.items import load_dataset
    from theorembench.evaluate.mcq.runner import KIND, MCQConfig
    from theorembench.evaluate.samples import Scored
    from theorembench.pipeline.identity import source_digest

    if prompt_style not in protocol.PROMPT_STYLES:
        raise InvalidSetting("prompt_style", f"must be one of {', '.join(protocol.PROMPT_STYLES)}")
    dataset = load_dataset(Path(file))
    cfg = MCQConfig(model="inspect", sketch=bool(with_sketch), seed=int(seed), prompt_style=prompt_style)
    samples = []
    for i, (item, raw) in enumerate(zip(dataset.items, dataset.raw, strict=True)):
        presented, msgs = cfg.prompt_for(item, i)
        samples.append(Sample(id=item.id, input=chat(msgs), target=presented.correct_label,
                              metadata={"index": i, "item_id": item.id, "theorem_type": raw.get("theorem_type"),
                                        "option_origin": presented.origin}))  # fmt: skip
    digest = source_digest([protocol], constants=True)

    async def judge(state: Any, target: Any) -> tuple[Scored, dict[str, Any]]:
        answer = protocol.extract_answer(state.output.completion)
        keyed = target.text
        return Scored(_at(state), "ok" if answer else "unparsed", float(answer == keyed), keyed, answer=answer,
                      explanation=f"extracted {answer!r}, keyed {keyed}"), {"protocol": digest}  # fmt: skip

    run = open_task(KIND, db=_db(db), name=dataset.name, config={"file": str(dataset.path), "dataset_id": dataset.id,
                    "sketch": cfg.sketch, "seed": cfg.seed, "prompt_style": prompt_style})  # fmt: skip
    return Task(dataset=MemoryDataset(samples, name=dataset.name, location=str(dataset.path)),
                scorer=_scorer("lmb_mcq_match", judge), config=GenerateConfig(max_tokens=LMB_MAX_TOKENS),
                metadata={**run.metadata(), "sketch": cfg.sketch, "month": dataset.month})  # fmt: skip


def _hybrid_questions(file: str | Path) -> tuple[Path, list[dict[str, Any]]]:
    """The generation-based questions of a `hybrid build` folder (or its questions.json), checked."""
    import json

    from theorembench.common.errors import UserError

    path = Path(file)
    path = path / "questions.json" if path.is_dir() else path
    try:
        questions = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not a `hybrid build` questions file ({exc})") from None
    if not isinstance(questions, list) or not questions:
        raise UserError(f"{path}: expected a non-empty JSON list of questions")
    for n, q in enumerate(questions):
        if not isinstance(q, dict) or not {"id", "m", "n", "answer", "items"} <= set(q):
            raise UserError(f"{path}: question {n} lacks one of id, m, n, answer, items")
    return path, questions


@task
@_one_line
def hybrid(file: str, db: str | None = None) -> Task:
    """Proof2Hybrid's generation-based evaluation: each m-out-of-n question asked once.

    ``file``: a `hybrid build` output folder (as ``theorembench hybrid eval`` takes it) or its questions.json;
    ``db``: the store the run goes to. Scored by the method's own pick parsing: the tight score (1 only when the
    picks are exactly the correct items) is the value; the loose score is in each score's metadata.
    """
    from inspect_ai.dataset import MemoryDataset, Sample

    from theorembench.evaluate.inspect_record import open_task
    from theorembench.evaluate.samples import Scored
    from theorembench.methods.hybrid.evaluate import parse_selection, score
    from theorembench.methods.hybrid.prompts import evaluation_messages

    path, questions = _hybrid_questions(file)
    samples = [Sample(id=q["id"], input=chat(evaluation_messages([it["text"] for it in q["items"]], q["m"])),
                      target=",".join(map(str, q["answer"])),
                      metadata={"index": i, "item_id": q["id"], "m": q["m"], "n": q["n"]})
               for i, q in enumerate(questions)]  # fmt: skip

    async def judge(state: Any, target: Any) -> tuple[Scored, dict[str, Any]]:
        at = _at(state)
        q = questions[at.index]
        picks = parse_selection(state.output.completion, q["n"])
        loose, tight = score(picks, q["answer"])
        status = "ok" if picks and len(picks) == q["m"] else "unparsed"
        return Scored(at, status, tight, target.text, answer=",".join(map(str, picks or [])),
                      explanation=f"loose {loose}, tight {tight}"), {"loose": loose, "tight": tight}  # fmt: skip

    run = open_task("eval.hybrid", db=_db(db), name=str(path.parent), config={"file": str(path), "mode": "generation"})
    return Task(dataset=MemoryDataset(samples, name=path.parent.name, location=str(path)),
                scorer=_scorer("hybrid_tight", judge), metadata=run.metadata())  # fmt: skip


@task
@_one_line
def eternal(file: str, db: str | None = None) -> Task:
    """EternalMath's evaluation by final answers: each instance's problem asked once.

    ``file``: an instances JSONL file (instances.jsonl of `eternal instantiate`, or a calibrated or released one,
    as ``theorembench eternal eval`` takes it); ``db``: the store the run goes to. Graded by the answer checker
    only (an answer it cannot read counts as wrong); each score's metadata keeps the checker's version.
    """
    from inspect_ai.dataset import MemoryDataset, Sample

    from theorembench.evaluate.inspect_record import open_task
    from theorembench.evaluate.samples import Scored
    from theorembench.methods.eternal.answering import SharedChecker, answer_messages, expected_of, load_instances
    from theorembench.methods.eternal.evaluate import KIND

    path = Path(file)
    instances = load_instances(path)
    samples = [Sample(id=inst["instance_id"], input=chat(answer_messages(inst["problem"])),
                      target=expected_of(inst)[0],
                      metadata={"index": i, "item_id": inst["instance_id"], "tier": inst.get("tier"),
                                "msc": inst.get("msc") or []}) for i, inst in enumerate(instances)]  # fmt: skip
    checker = SharedChecker()

    async def judge(state: Any, target: Any) -> tuple[Scored, dict[str, Any]]:
        at = _at(state)
        expected, kind = expected_of(instances[at.index])
        verdict = await checker.check(expected, state.output.completion, kind)
        status = "unparsed" if verdict["correct"] is None else "ok"
        return Scored(at, status, float(verdict["correct"] is True), expected, answer=verdict.get("extracted"),
                      explanation="; ".join(verdict.get("messages") or []) or "graded by the answer checker"), {
                          "checker_version": verdict.get("checker_version"), "warning": verdict.get("warning")}

    run = open_task(KIND, db=_db(db), name=str(path), config={"file": str(path)})
    run.closers.append(checker.close)
    return Task(dataset=MemoryDataset(samples, name=path.name, location=str(path)),
                scorer=_scorer("final_answer", judge), metadata=run.metadata())  # fmt: skip


@task
@_one_line
def improof(problems: str | list[str] | None = None, db: str | None = None, main_tokens: int | None = None,
            sub_tokens: int | None = None) -> Task:  # fmt: skip
    """IMProofBench's staged conversation in single-turn mode (App. I.1): the main question, then each subquestion,
    one reply each; every answer recorded and auto-graded in the store, as ``theorembench improof eval --mode
    single-turn`` does.

    ``problems``: problem ids, comma-separated (default: every active problem in the store); ``db``: the store that
    holds them, where answers, verdicts and the run go (default: the default store); ``main_tokens`` and
    ``sub_tokens``: the stages' token budgets (default: the paper's). Scored by the weighted score of the
    auto-graded subquestions (the answer checker); a conversation without an answer scores 0.
    """
    from theorembench.suite.inspect_improof import improof_task

    return improof_task(problems, db=_db(db), main_tokens=main_tokens, sub_tokens=sub_tokens)


__all__ = ["chat", "eternal", "hybrid", "improof", "lmb_mcq"]
