"""One problem's staged conversation, as an Inspect solver: main question, then each subquestion in turn.

Stage 0 shows the main question only. Stage k (k >= 1) opens with subquestion k, once stage k-1
has ended; a stage ends when the model calls ``submit`` (``submitted``), when its token budget
is spent (``limit_exceeded``, see :mod:`budget`), or with ``error``: a model call that failed
after the LLM layer's retries (not final when transient: the conversation stops there and the next run
asks again; final when the request itself was refused, a 400 such as "prompt is too long", which
asking again cannot cure: the stage has no answer and the next stage follows), or more than
``max_malformed`` turns in a row with a malformed tool call (final; each malformed
call first gets Inspect's error message back, so the model can try again). After each turn that
did not end the stage, a user note gives the stage's usage against its budget.

In single-turn mode (App. I.1) there are no sandbox tools: each stage is one reply (the
provider's own web search or code interpreter may run inside it, Table 2), the main answer is
the whole reply and a subquestion's answer is the content of its last ``\\boxed{}`` (the whole
reply when there is none). An answer given in the call that passes a stage's budget is kept or
discarded by the setting ``over_budget_answer`` (see :mod:`budget`).

Every turn is stored as it happens and replayed on a rerun (see :mod:`replay`). The model is the
task's, ``theorembench/<model>`` (see :mod:`theorembench.llm.inspect_provider`): each call goes
through the LLM layer's cache, retries and usage ledger, the epoch being the call's sample index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from theorembench.evaluate.answers import extract_answer
from theorembench.llm.failures import FINAL_KINDS, classify
from theorembench.methods.improof.budget import StageRecord, crossing_call, hosted_uses, usage_of
from theorembench.methods.improof.config import HarnessSettings
from theorembench.methods.improof.problems import Problem
from theorembench.methods.improof.prompts import RESUMED, main_prompt, status_note, sub_prompt
from theorembench.methods.improof.replay import Turn, TurnLog, conversation_key, dump_messages, load_messages
from theorembench.store import Store

SANDBOX_TOOLS = ("python", "bash", "sage")


@dataclass
class Plan:
    """What every conversation of a run shares."""

    store: Store
    pipeline: str
    settings: HarnessSettings
    problems: dict[str, Problem]
    tools: list[Any]
    offered: list[str]  # tool names listed in the prompt
    on_done: Callable[[Problem, int, dict[str, Any]], None]
    tool_names: set[str] = field(default_factory=set)


class Conversation:
    """The stages of one problem version and epoch, replayed from the store where turns are stored."""

    def __init__(self, plan: Plan, problem: Problem, epoch: int):
        self.plan = plan
        self.settings = plan.settings
        self.problem = problem
        self.epoch = epoch
        self.log = TurnLog(plan.store, plan.pipeline, conversation_key(problem.id, problem.version or 1, epoch))
        self.messages: list[Any] = []
        self.stages: list[StageRecord] = []
        self.replayed = 0  # turns put back from the store
        self.live = 0  # turns that called the model
        self.sandbox_touched = False  # a replayed turn ran code whose files are gone now
        self.last_output: Any = None

    def budget(self, stage: int) -> int:
        return self.settings.main_tokens if stage == 0 else self.settings.sub_tokens

    async def run(self) -> dict[str, Any]:
        from inspect_ai.model import ChatMessageUser

        s = self.settings
        self.messages = [ChatMessageUser(content=main_prompt(
            self.problem.statement, tools=self.plan.offered, main_tokens=s.main_tokens, sub_tokens=s.sub_tokens,
            timeout_s=s.tool_timeout_s, memory_mb=s.tool_memory_mb, mode=s.mode, wording=s.wording))]  # fmt: skip
        for k in range(len(self.problem.subquestions) + 1):
            if k > 0:
                prev = self.stages[-1]
                text = sub_prompt(k, self.problem.subquestions[k - 1].text, mode=s.mode, wording=s.wording,
                                  previous=prev.outcome or "error", used=prev.used, budget=prev.budget)  # fmt: skip
                self.messages.append(ChatMessageUser(content=text))
            record = StageRecord(stage=k, budget=self.budget(k))
            self.stages.append(record)
            await self.stage(record)
            if not record.final:
                break
        return self.result()

    async def stage(self, rec: StageRecord) -> None:
        malformed_run, last = 0, None
        while (turn := self.log.turn(rec.stage, rec.turns + 1)) is not None:
            last = turn
            self.messages.extend(load_messages(turn.messages))
            rec.add(turn.input_tokens, turn.output_tokens, turn.reasoning_tokens, turn.tool_calls)
            rec.turns += 1
            self.replayed += 1
            malformed_run = malformed_run + 1 if turn.malformed else 0
            self.sandbox_touched |= any(name in SANDBOX_TOOLS for name in turn.tool_calls)
        end = self.log.end(rec.stage)
        if end is not None:
            usage = end["usage"]
            rec.outcome, rec.answer, rec.error = end["outcome"], end.get("answer"), end.get("error")
            rec.input_tokens, rec.output_tokens = usage["input_tokens"], usage["output_tokens"]
            rec.reasoning_tokens, rec.tool_calls = usage["reasoning_tokens"], dict(usage["tool_calls"])
            rec.discarded_answer = usage.get("discarded_answer")
            return
        if last is not None and (self.settings.mode != "agentic" or last.submitted is not None):
            self.end(rec, "submitted", answer=last.submitted)  # stopped after storing the turn, before its end
        elif malformed_run > self.settings.max_malformed:
            self.end(rec, "error", f"{malformed_run} turns in a row with a malformed tool call")
        while rec.outcome is None:
            if rec.remaining <= 0:
                self.end(rec, "limit_exceeded")
            elif rec.turns >= self.settings.max_turns:
                self.end(rec, "limit_exceeded", f"stopped after {rec.turns} turns (the turn cap)")
            else:
                malformed_run = await self.turn(rec, malformed_run)

    def end(self, rec: StageRecord, outcome: str, error: str | None = None, answer: str | None = None) -> None:
        rec.outcome, rec.error, rec.answer = outcome, error, answer
        self.log.put_end(rec.stage, rec.end_record())

    async def turn(self, rec: StageRecord, malformed_run: int) -> int:
        """One model call and its tools; returns the run of malformed turns so far."""
        from inspect_ai.model import ChatMessageUser, execute_tools, get_model
        from inspect_ai.util import LimitExceededError, token_limit

        prefix: list[Any] = []
        if self.sandbox_touched and self.live == 0:
            prefix.append(ChatMessageUser(content=RESUMED))
        agentic = self.settings.mode == "agentic"
        try:
            with token_limit(rec.remaining, type="output"):
                output = await get_model().generate(self.messages + prefix, tools=self.plan.tools)
        except LimitExceededError as exc:
            if exc.type != "token":
                raise
            usage, crossing = crossing_call(exc.value)
            kept = self.over_budget(rec, crossing)
            if kept is None:
                rec.add(*usage)
                self.end(rec, "limit_exceeded")
                return malformed_run
            output = kept
        except Exception as exc:  # noqa: BLE001 - the model call failed after the LLM layer's retries
            failure = classify(exc)  # Inspect's wrapper taken off: the LLM layer's final error, or the provider's
            if failure.kind in FINAL_KINDS:  # the request itself is refused (a 400): an outcome, asked never again
                self.end(rec, "error", f"model call failed for good: {failure.message[:300]}")
            else:  # transient (429, 5xx, a timeout) or the endpoint's (a key): the next run asks again
                rec.outcome, rec.error, rec.final = "error", f"model call failed: {_cause(exc)}", False
            return malformed_run
        if output.error:
            rec.outcome, rec.error, rec.final = "error", f"model call failed: {output.error}", False
            return malformed_run
        self.live += 1
        self.last_output = output
        assistant = output.message
        new = [*prefix, assistant]
        calls = list(assistant.tool_calls or []) if agentic else []
        if calls:
            new += (await execute_tools([*self.messages, *new], self.plan.tools)).messages
        counts = dict(Counter(c.function for c in calls) + hosted_uses(assistant))
        results = {m.tool_call_id: m for m in new if getattr(m, "role", None) == "tool"}
        malformed = any(self.is_malformed(c, results.get(c.id)) for c in calls)
        malformed_run = malformed_run + 1 if malformed else 0
        rec.add(*usage_of(output), counts)
        rec.turns += 1
        answer, outcome, error = None, None, None
        if not agentic:
            answer, outcome = self.reply_answer(rec.stage, output.completion or ""), "submitted"
        elif (submitted := self.submitted(calls, results)) is not None:
            answer, outcome = submitted, "submitted"
        elif malformed_run > self.settings.max_malformed:
            outcome, error = "error", f"{malformed_run} turns in a row with a malformed tool call"
        elif rec.remaining > 0:
            new.append(ChatMessageUser(content=status_note(rec.used, rec.budget, self.settings.wording)))
        inp, out, reasoning = usage_of(output)
        self.log.put_turn(rec.stage, rec.turns, Turn(dump_messages(new), inp, out, reasoning, counts, malformed,
                                                     answer))  # fmt: skip
        self.messages.extend(new)
        if outcome is not None:
            self.end(rec, outcome, error, answer)
        return malformed_run

    def over_budget(self, rec: StageRecord, crossing: Any) -> Any | None:
        """The call that passed the stage's budget, as an output to keep when it answers and answers are kept
        (``over_budget_answer = "keep"``): only its ``submit`` calls, none of its other tools (agentic), or its
        reply (single-turn). None when it is dropped; an answer it gave is then kept in the stage as
        ``discarded_answer``."""
        message = getattr(crossing, "message", None)
        if message is None:
            return None
        agentic = self.settings.mode == "agentic"
        submits = [c for c in (message.tool_calls or []) if c.function == "submit" and not c.parse_error
                   and isinstance(c.arguments.get("answer"), str)] if agentic else []  # fmt: skip
        answer = submits[0].arguments["answer"] if submits else None
        if not agentic:
            answer = self.reply_answer(rec.stage, crossing.completion or "")
        if answer is None:
            return None
        if self.settings.over_budget_answer == "discard":
            rec.discarded_answer = answer
            return None
        if agentic:
            crossing.message.tool_calls = submits[:1]
        return crossing

    def is_malformed(self, call: Any, result: Any) -> bool:
        """A call Inspect could not parse, of a tool not offered, or whose arguments did not fit the tool."""
        if call.parse_error or call.function not in self.plan.tool_names:
            return True
        error = getattr(result, "error", None)
        return error is not None and error.type == "parsing"

    def submitted(self, calls: list[Any], results: dict[str, Any]) -> str | None:
        """The answer of the turn's first well-formed ``submit`` call, if any."""
        for call in calls:
            if call.function != "submit" or self.is_malformed(call, results.get(call.id)):
                continue
            answer = call.arguments.get("answer")
            if isinstance(answer, str):
                return answer
        return None

    @staticmethod
    def reply_answer(stage: int, reply: str) -> str | None:
        """Single-turn: the whole reply for the main question, the last boxed answer for a subquestion."""
        if not reply.strip():
            return None
        if stage == 0:
            return reply
        found = extract_answer(reply)
        return found.text if found.source == "boxed" and found.text is not None else reply

    def result(self) -> dict[str, Any]:
        n = len(self.problem.subquestions)
        answers = [s.answer if s.outcome == "submitted" else None for s in self.stages]
        answers += [None] * (n + 1 - len(answers))
        return {"problem_id": self.problem.id, "version": self.problem.version, "epoch": self.epoch,
                "complete": all(s.final for s in self.stages) and len(self.stages) == n + 1,
                "stages": [s.to_dict() for s in self.stages], "main_answer": answers[0], "sub_answers": answers[1:],
                "turns_replayed": self.replayed, "turns_live": self.live}  # fmt: skip


def _cause(exc: BaseException) -> str:
    """A failed call's reason in one line, with a retry wrapper's last error taken out of it."""
    last = getattr(exc, "last_attempt", None)
    inner = last.exception() if last is not None and hasattr(last, "exception") else None
    if isinstance(inner, BaseException):
        exc = inner
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


def improof_solver(plan: Plan) -> Any:
    """The Inspect solver that runs one :class:`Conversation` per sample (problem × epoch)."""
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import solver

    @solver(name="improof_stages")
    def stages() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            problem = plan.problems[str(state.sample_id)]
            convo = Conversation(plan, problem, state.epoch)
            result = await convo.run()
            state.messages = convo.messages
            state.output = convo.last_output or ModelOutput.from_content(str(state.model), result["main_answer"] or "")
            state.metadata["improof"] = {k: v for k, v in result.items() if k not in ("main_answer", "sub_answers")}
            plan.on_done(problem, state.epoch, result)
            return state

        return solve

    return stages()
