"""The LLM fallback stage of theorem extraction: when the rules find no main theorem, a model looks.

The model reads a window of the flattened paper through the one LLM layer (structured
output) and copies at most one primary theorem-level claim, or says there is none. The
statement it copies becomes a theorem record in the LaTeX layer
(:func:`theorembench.latex.extract.record_from_statement`).
"""

from __future__ import annotations

from typing import Any

from theorembench.latex.extract import ExtractSettings, PaperText, record_from_statement
from theorembench.llm import GenerateSettings

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "found": {"type": "boolean"},
        "environment": {"type": "string"},
        "statement": {"type": "string"},
        "reason": {"type": "string"},
    },
    "required": ["found", "statement", "reason"],
}

SYSTEM = (
    "You read the LaTeX source of a mathematics paper and identify its main result. "
    "Return at most one primary theorem-level claim: the central new result the paper proves. "
    "When several candidates appear, prefer a theorem over a lemma, proposition or corollary; "
    "never return an axiom, a definition, a conjecture, a remark or a result the paper only cites. "
    "Copy the statement verbatim from the source (LaTeX included), without its proof. "
    "If the paper states no such result, set found to false and leave the statement empty."
)

MIN_STATEMENT_CHARS = 20


def messages(paper: PaperText, window_chars: int) -> list[dict[str, str]]:
    text = paper.text
    start = text.find("\\begin{document}")
    window = text[start if start >= 0 else 0 :][:window_chars]
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Paper source (possibly truncated):\n\n" + window +
            '\n\nAnswer in JSON: {"found": true|false, "environment": "theorem|proposition|...", '
            '"statement": "...", "reason": "one sentence"}'},
    ]  # fmt: skip


async def find_by_llm(paper: PaperText, settings: ExtractSettings, rules_reason: str, *, llm: Any,
                      model: Any) -> tuple[dict[str, Any] | None, str]:  # fmt: skip
    """(record or None, why). A failed model call raises (LLMError, StructuredOutputError): not an outcome."""
    answer, _ = await llm.generate_json(
        model, messages(paper, settings.llm_window_chars), SCHEMA, GenerateSettings(temperature=0.0, max_tokens=1200),
        purpose="papers.extract_fallback",
    )  # fmt: skip
    statement = (answer.get("statement") or "").strip()
    if not answer.get("found") or len(statement) < MIN_STATEMENT_CHARS:
        return None, f"{rules_reason}; LLM fallback found no primary theorem ({answer.get('reason', '')})"
    record = record_from_statement(paper, statement, answer.get("environment"),
                                   reason=f"{rules_reason}; {answer.get('reason', '')}", settings=settings)  # fmt: skip
    return record, "found by the LLM fallback"
