"""The part of a paper the validity judge reads beside a template's instances: the blocks nearest the theorem.

The paper is cut into blocks (paragraphs, display environments kept whole: ``latex.context``).
Each block is scored by how many of the template's distinctive words and symbols it holds (its
``target_paper_module``, ``core_math_concept``, ``theorem``, ``natural_lang_solution`` and
``problem_template``), weighted by their rarity in the paper; a theorem-like environment counts
double. The best blocks, within the character budget, are shown in the paper's order. A paper
without LaTeX gives its title, abstract and main theorem instead.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from theorembench.latex.context import split_blocks, tokens, trim

_THEOREMISH = re.compile(r"\\begin\s*\{(theorem|thm|proposition|prop|lemma|corollary|cor|formula)", re.I)
_FIELDS = ("target_paper_module", "core_math_concept", "theorem", "natural_lang_solution", "problem_template")


def _query(template: Any) -> Counter[str]:
    raw = template.raw if hasattr(template, "raw") else dict(template)
    text = " ".join(str(raw.get(k) or "") for k in _FIELDS)
    return Counter(t for t in tokens(text) if len(t) > 2)


def relevant_excerpt(paper: Any | None, template: Any, chars: int) -> str:
    """At most ``chars`` characters of ``paper`` (a :class:`~.filter.PaperInput`) that bear on ``template``."""
    if paper is None:
        return ""
    body = paper.latex or ""
    start = body.find("\\begin{document}")
    body = body[start:] if start >= 0 else body
    if not body.strip():
        return paper.text(chars)
    blocks = split_blocks(body)
    query = _query(template)
    seen = Counter(t for b in blocks for t in set(tokens(b.text)))
    scored = []
    for i, block in enumerate(blocks):
        words = set(tokens(block.text))
        score = sum(1.0 / math.log(2 + seen[t]) for t in query if t in words)
        if _THEOREMISH.search(block.text):
            score *= 2
        if score > 0:
            scored.append((score, i))
    chosen, used = [], 0
    for _score, i in sorted(scored, key=lambda s: (-s[0], s[1])):
        size = len(blocks[i].text) + 6
        if used + size > chars and chosen:
            continue
        chosen.append(i)
        used += size
    if not chosen:
        return paper.text(chars)
    return trim("\n\n[...]\n\n".join(blocks[i].text for i in sorted(chosen)), chars)


__all__ = ["relevant_excerpt"]
