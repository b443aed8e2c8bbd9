"""The LLM fallback stage of theorem extraction: when the rules find no main theorem, a model looks.

The model reads a window of the flattened paper through the one LLM layer (structured
output) and copies at most one primary theorem-level claim, or says there is none.

A model may paraphrase or invent a statement, so what it copies is accepted only when it
is *located* in the paper's own text (:func:`locate`):

* exactly, once both texts are normalised: LaTeX comments and ``\\label{...}`` dropped and
  all whitespace removed; or
* fuzzily: the best-matching window of the normalised paper has a
  :class:`difflib.SequenceMatcher` ratio of at least ``settings.llm_match_threshold``
  (default :data:`MATCH_THRESHOLD`, 0.9) against the normalised statement.

The record is then built from the paper's own text at that place (not from the model's
copy) by the LaTeX layer; a statement that cannot be located is rejected with the best
ratio found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from theorembench.latex.extract import ExtractSettings, PaperText, build_record
from theorembench.latex.theorems import TheoremBlock
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
MATCH_THRESHOLD = 0.9
"""Default lowest fuzzy ratio (difflib, 0..1) at which a copied statement counts as found in the paper."""

_SHINGLE = 12  # characters of the normalised statement used to find candidate places
_MAX_CANDIDATES = 8
_DROP = re.compile(r"(?<!\\)%[^\n]*|\\label\s*\{[^{}]*\}|\s+")


@dataclass(frozen=True)
class Location:
    start: int  # offsets in the paper's text
    end: int
    ratio: float  # 1.0 for an exact match after normalisation


def normalise(text: str) -> tuple[str, list[int]]:
    """``text`` without comments, labels and whitespace, and the offset in ``text`` of each kept character."""
    kept: list[str] = []
    where: list[int] = []
    pos = 0
    for m in _DROP.finditer(text):
        kept.append(text[pos : m.start()])
        where.extend(range(pos, m.start()))
        pos = m.end()
    kept.append(text[pos:])
    where.extend(range(pos, len(text)))
    return "".join(kept), where


def _span(where: list[int], a: int, b: int) -> tuple[int, int]:
    return where[a], where[b - 1] + 1


def locate(text: str, statement: str, threshold: float = MATCH_THRESHOLD) -> tuple[Location | None, float]:
    """(where ``statement`` sits in ``text``, or None; the best ratio found). See the module docstring."""
    norm, where = normalise(text)
    probe, _ = normalise(statement)
    if not probe or not norm:
        return None, 0.0
    at = norm.find(probe)
    if at >= 0:
        start, end = _span(where, at, at + len(probe))
        return Location(start, end, 1.0), 1.0
    # candidate places: where pieces of the statement occur, voted by the start they imply
    votes: dict[int, int] = {}
    step = max(1, len(probe) // 40)
    for offset in range(0, max(1, len(probe) - _SHINGLE + 1), step):
        piece = probe[offset : offset + _SHINGLE]
        hit, seen = norm.find(piece), 0
        while hit >= 0 and seen < 20:
            votes[max(0, hit - offset)] = votes.get(max(0, hit - offset), 0) + 1
            hit, seen = norm.find(piece, hit + 1), seen + 1
    best: tuple[float, int, int] = (0.0, 0, 0)
    for start in sorted(votes, key=lambda s: -votes[s])[:_MAX_CANDIDATES]:
        lo, hi = max(0, start - len(probe) // 4), min(len(norm), start + len(probe) + len(probe) // 4)
        blocks = [b for b in SequenceMatcher(None, probe, norm[lo:hi], autojunk=False).get_matching_blocks() if b.size]
        if not blocks:
            continue
        a, b = lo + blocks[0].b, lo + blocks[-1].b + blocks[-1].size  # the aligned window
        ratio = SequenceMatcher(None, probe, norm[a:b], autojunk=False).ratio()
        if ratio > best[0]:
            best = (ratio, a, b)
    ratio, a, b = best
    if ratio >= threshold and b > a:
        start, end = _span(where, a, b)
        return Location(start, end, ratio), ratio
    return None, ratio


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
    """(record or None, why). A failed model call raises (LLMError, StructuredOutputError): not an outcome.

    A statement that is not located in the paper (see :func:`locate`) gives no record and says why.
    """
    answer, _ = await llm.generate_json(
        model, messages(paper, settings.llm_window_chars), SCHEMA, GenerateSettings(temperature=0.0, max_tokens=1200),
        purpose="papers.extract_fallback",
    )  # fmt: skip
    statement = (answer.get("statement") or "").strip()
    if not answer.get("found") or len(statement) < MIN_STATEMENT_CHARS:
        return None, f"{rules_reason}; LLM fallback found no primary theorem ({answer.get('reason', '')})"
    threshold = settings.llm_match_threshold
    where, ratio = locate(paper.text, statement, threshold)
    if where is None:
        return None, (f"{rules_reason}; LLM fallback's statement rejected: not found in the paper "
                      f"(best match ratio {ratio:.2f}, below the threshold {threshold:g})")  # fmt: skip
    content = paper.text[where.start : where.end]
    block = TheoremBlock(
        env_name=answer.get("environment") or "theorem", kind="theorem", title="Theorem", content=content,
        start_pos=where.start, end_pos=where.end, block_start=where.start, block_end=where.end, label=None, note=None,
    )  # fmt: skip
    record = build_record(paper, block, path="llm", reason=f"{rules_reason}; {answer.get('reason', '')}",
                          settings=settings, intro=None)  # fmt: skip
    if where.ratio < 1.0:
        record["problems"].append(f"the LLM's statement matched the source fuzzily (ratio {where.ratio:.2f}); "
                                  "the source's own text is kept")  # fmt: skip
    return record, "found by the LLM fallback"
