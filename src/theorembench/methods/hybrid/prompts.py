"""Prompts and JSON schemas of the Proof2Hybrid stages."""

from __future__ import annotations

from typing import Any

Messages = list[dict[str, str]]

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["correct", "incorrect"]},
        "reason": {"type": "string", "maxLength": 600},
    },
    "required": ["verdict", "reason"],
}


def distractor_schema(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "distractors": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "change": {"type": "string", "maxLength": 300}},
                    "required": ["text", "change"],
                },
            }
        },
        "required": ["distractors"],
    }


_JUDGE_SYSTEM = (
    "You are a careful research mathematician refereeing a single item: either a definition, or a "
    "statement together with its proof. Decide whether it is mathematically correct as written: the "
    "definition is coherent and standard, or the statement is true and the proof establishes it without a "
    "gap, a false step, a wrong condition or a wrong formula. Referenced results (such as 'Lemma 01ZQ') may "
    "be assumed. Minor typography is not an error."
)


def judge_messages(item_text: str) -> Messages:
    return [
        {"role": "system", "content": _JUDGE_SYSTEM},
        {"role": "user", "content": f"## Item\n\n{item_text}\n\nIs this item mathematically correct? Reply with one "
                                    'JSON object and nothing else: {"verdict": "correct" | "incorrect", '
                                    '"reason": "<one or two sentences>"}'},
    ]  # fmt: skip


_DISTRACTOR_SYSTEM = (
    "You write subtly wrong versions of a piece of research mathematics, for a benchmark that tests whether "
    "readers can tell a correct argument from a nearly correct one. Each version changes one mathematically "
    "meaningful thing: a keyword (injective/surjective, open/closed, finite/finitely generated), a condition "
    "(dropping or weakening a hypothesis, reversing an inclusion), a quantifier, an index or a formula. The "
    "result must read fluently, keep the notation and length of the original, and be wrong in a way that an "
    "expert would have to check carefully to notice. Do not announce the change inside the text."
)


def distractor_messages(kind: str, statement: str, proof: str | None, n: int) -> Messages:
    if kind == "statement_proof":
        task = (f"Write {n} different flawed versions of the PROOF below. Keep the statement exactly as it is; "
                "change only the proof, each version in one place that breaks the argument.")  # fmt: skip
        body = f"## Statement\n\n{statement}\n\n## Proof\n\n{proof}"
        what = "the whole modified proof"
    else:
        task = f"Write {n} different flawed versions of the DEFINITION below, each wrong in one place."
        body = f"## Definition\n\n{statement}"
        what = "the whole modified definition"
    return [
        {"role": "system", "content": _DISTRACTOR_SYSTEM},
        {"role": "user", "content": f"{task}\n\n{body}\n\nReply with one JSON object and nothing else: "
                                    f'{{"distractors": [{{"text": "<{what}>", "change": "<what you changed>"}}, ...]}} '
                                    f"with exactly {n} entries."},
    ]  # fmt: skip


_EVAL_SYSTEM = (
    "You are an expert mathematician. You will see several numbered items, each a definition or a statement "
    "with its proof. Exactly {m} of them are mathematically correct; every other one contains an error. "
    "Examine each item, then name the {m} correct ones. Finish with the item numbers inside \\boxed{{}}, "
    "separated by commas, for example \\boxed{{{example}}}."
)


def evaluation_messages(items: list[str], m: int) -> Messages:
    example = ", ".join(str(i) for i in range(1, m + 1))
    body = "\n\n".join(f"### Item {i}\n\n{text}" for i, text in enumerate(items, start=1))
    return [
        {"role": "system", "content": _EVAL_SYSTEM.format(m=m, example=example)},
        {"role": "user", "content": f"{body}\n\nExactly {m} of these {len(items)} items are correct. Which ones?"},
    ]


# Perplexity-based evaluation scores each option on its own, as the paper does. This framing sentence goes
# before every option only when asked (``perplexity_prefix``): it is ours, not the paper's.
PERPLEXITY_PREFIX = "The following is a correct piece of mathematics, taken from a reference text.\n\n"
