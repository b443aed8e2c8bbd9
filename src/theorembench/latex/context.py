"""Context recovery: the notation and definitions a reader needs to understand the theorem.

Two layers, as in LiveMathematicianBench's Stage 3a:

1. *Introduction layer.* The introduction before the theorem is cut into blocks
   (paragraphs, with display environments kept whole). Each is scored by token
   overlap with the theorem, definitional cues ("let", "denote", "we say"...),
   mathematical density and proximity; the two blocks right before the theorem are
   always kept, and the best others join them in their original order.
2. *Whole-paper layer.* Anchor terms are taken from the theorem (its
   mathematical symbols and distinctive words); every block of the paper is
   scored by anchor hits, by whether it is a definition-like environment or sits
   under a heading such as "Setup" or "Preliminaries", and by distance to the
   theorem.

Content referenced (``\\ref``/``\\eqref``) from the selected blocks is appended,
and each result is trimmed to a character budget.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from theorembench.latex.refs import LabelTarget, refs_in, strip_labels
from theorembench.latex.theorems import Section

DEFINITIONAL = re.compile(
    r"\b(let|denote[sd]?|suppose|assume|define[sd]?|we say|is called|are called|we write|write|"
    r"consider|where|recall|fix|given|notation|set)\b",
    re.IGNORECASE,
)
SETUP_HEADING = re.compile(r"setup|set-up|preliminar|notation|definition|background|framework|convention|"
                           r"setting|basic|statement", re.IGNORECASE)  # fmt: skip
DEFINITION_ENVS = re.compile(r"\\begin\s*\{(definition|defn|notation|assumption|setup|convention|setting|hypothesis)",
                             re.IGNORECASE)  # fmt: skip
_WORD = re.compile(r"\\[A-Za-z]+|[A-Za-z][A-Za-z\-]{2,}")
_STOP = set(
    "the and for that with this then there are let any all each which where from such has have its into "
    "one two not can will may also when than over under only some more most our their these those thus "
    "hence every exists exist holds hold given satisfies satisfying satisfy following we is be as of in to "
    "if on by an or at it".split()
)
_COMMON_COMMANDS = set(
    r"\begin \end \label \ref \eqref \cite \emph \textbf \textit \text \mathrm \left \right \frac \in \leq \geq "
    r"\le \ge \to \infty \sum \int \cdot \ldots \dots \cdots \quad \qquad \mathbb \mathcal \mathfrak \operatorname "
    r"\subset \subseteq \times \lim \sup \inf \max \min \log \exp \mid \colon \item".split()
)


@dataclass
class Block:
    text: str
    start: int
    end: int


def split_blocks(text: str, offset: int = 0) -> list[Block]:
    """Paragraph blocks (blank-line separated); a display environment is never cut in two."""
    blocks: list[Block] = []
    depth = 0
    start = 0
    for m in re.finditer(r"\\(begin|end)\s*\{[^{}]*\}|\n[ \t]*\n", text):
        token = m.group(0)
        if token.startswith("\\begin"):
            depth += 1
        elif token.startswith("\\end"):
            depth = max(0, depth - 1)
        elif depth == 0:
            chunk = text[start : m.start()]
            if chunk.strip():
                blocks.append(Block(chunk.strip(), offset + start, offset + m.start()))
            start = m.end()
    chunk = text[start:]
    if chunk.strip():
        blocks.append(Block(chunk.strip(), offset + start, offset + len(text)))
    return blocks


def tokens(text: str) -> list[str]:
    return [t.lower() if not t.startswith("\\") else t for t in _WORD.findall(text) if t.lower() not in _STOP]


def math_density(text: str) -> float:
    math_chars = sum(len(m.group(0)) for m in re.finditer(r"\$[^$]*\$|\\\[.*?\\\]|\\\(.*?\\\)", text, re.DOTALL))
    return math_chars / max(1, len(text))


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / math.sqrt(max(1, len(a)) * max(1, len(b)))


@dataclass
class ContextResult:
    pre_intro: str
    post_intro: str
    context: str
    full_context: str
    intro_blocks: list[int]  # offsets of the selected introduction blocks
    paper_blocks: list[int]  # offsets of the selected whole-paper blocks
    referenced: list[str]  # labels appended


def anchor_terms(theorem: str, paper: str, limit: int = 12) -> list[str]:
    """Symbols and words of the theorem that are distinctive in this paper."""
    counts = Counter(tokens(theorem))
    paper_counts = Counter(tokens(paper))
    scored = []
    for term, n in counts.items():
        if term in _COMMON_COMMANDS or len(term) < 3:
            continue
        rarity = 1.0 / math.log(2 + paper_counts.get(term, 0))
        scored.append((n * rarity, term))
    scored.sort(reverse=True)
    return [t for _, t in scored[:limit]]


def recover_context(
    text: str,
    theorem_start: int,
    theorem_end: int,
    theorem_content: str,
    intro: Section | None,
    all_sections: list[Section],
    targets: dict[str, LabelTarget],
    *,
    intro_blocks: int = 6,
    paper_blocks: int = 6,
    context_chars: int = 4000,
    full_context_chars: int = 12000,
) -> ContextResult:
    theorem_tokens = set(tokens(theorem_content))
    pre_intro = text[intro.body_start : theorem_start].strip() if intro else ""
    post_intro = text[theorem_end : intro.end].strip() if intro else ""
    if intro:
        head = text[intro.body_start : theorem_start]
        blocks = split_blocks(head, intro.body_start)
    else:
        window_start = max(0, theorem_start - 6000)
        blocks = split_blocks(text[window_start:theorem_start], window_start)
    # layer 1: introduction blocks before the theorem
    chosen: list[Block] = blocks[-2:]
    rest = blocks[:-2]
    scored = []
    for idx, block in enumerate(rest):
        toks = set(tokens(block.text))
        score = (
            2.0 * _overlap(toks, theorem_tokens)
            + 0.3 * min(5, len(DEFINITIONAL.findall(block.text)))
            + 1.5 * math_density(block.text)
            + 1.0 * (idx + 1) / max(1, len(rest))  # proximity: later blocks are closer
        )
        scored.append((score, block))
    scored.sort(key=lambda sb: -sb[0])
    chosen += [b for _, b in scored[: max(0, intro_blocks - len(chosen))]]
    chosen.sort(key=lambda b: b.start)
    layer1 = "\n\n".join(b.text for b in chosen)

    # layer 2: the whole paper
    anchors = anchor_terms(theorem_content, text)
    chosen_starts = {b.start for b in chosen}
    candidates = []
    for sec in all_sections or []:
        sec_relevant = bool(SETUP_HEADING.search(sec.title))
        for block in split_blocks(text[sec.body_start : sec.end], sec.body_start):
            if block.start in chosen_starts or theorem_start <= block.start < theorem_end:
                continue
            if len(block.text) > 3000:
                continue
            hits = sum(1 for a in anchors if a in block.text or a.lower() in block.text.lower())
            if hits == 0 and not sec_relevant:
                continue
            distance = abs(block.start - theorem_start) / max(1, len(text))
            score = (
                1.0 * hits
                + (1.5 if DEFINITION_ENVS.search(block.text) else 0.0)
                + (1.0 if sec_relevant else 0.0)
                + 0.5 * min(3, len(DEFINITIONAL.findall(block.text))) / 3
                - 1.0 * distance
            )
            candidates.append((score, block))
    seen: set[int] = set()
    layer2: list[Block] = []
    for _score, block in sorted(candidates, key=lambda sb: -sb[0]):
        if block.start in seen:
            continue
        seen.add(block.start)
        layer2.append(block)
        if len(layer2) >= paper_blocks:
            break
    layer2.sort(key=lambda b: b.start)

    # referenced content from the selected blocks
    def referenced(blocks_text: str, present: list[Block]) -> tuple[str, list[str]]:
        spans = [(b.start, b.end) for b in present] + [(theorem_start, theorem_end)]
        labels = [lab for lab in refs_in(blocks_text) if lab in targets]
        # content already present (in a selected block or the theorem itself) is not appended again
        labels = [lab for lab in labels if not any(s <= targets[lab].start < e for s, e in spans)]
        parts = [targets[lab].content for lab in labels]
        return "\n\n".join(parts), labels

    ref1, labels1 = referenced(layer1, chosen)
    context = _join([layer1, ref1], context_chars)
    full_text = "\n\n".join(b.text for b in layer2)
    ref2, labels2 = referenced(layer1 + "\n" + full_text, [*chosen, *layer2])
    full_context = _join([layer1, full_text, ref2], full_context_chars)
    return ContextResult(
        pre_intro=pre_intro, post_intro=post_intro, context=strip_labels(context),
        full_context=strip_labels(full_context),
        intro_blocks=[b.start for b in chosen], paper_blocks=[b.start for b in layer2],
        referenced=[lab for lab in refs_in(layer1 + "\n" + full_text) if lab in targets
                    and not theorem_start <= targets[lab].start < theorem_end],
    )  # fmt: skip


def _join(parts: list[str], budget: int) -> str:
    return trim("\n\n".join(p for p in parts if p.strip()), budget)


def trim(text: str, budget: int) -> str:
    """At most ``budget`` characters, ending on a paragraph or sentence boundary when one is near."""
    if len(text) <= budget:
        return text
    cut = text[:budget]
    # end on a paragraph or sentence boundary when one is near
    for sep in ("\n\n", ". "):
        k = cut.rfind(sep)
        if k > budget * 0.7:
            return cut[: k + (1 if sep == ". " else 0)]
    return cut


_MSC = re.compile(r"\b\d{2}[A-Z](?:\d{2}|xx|XX)\b|\b\d{2}-(?:\d{2}|XX|xx)\b")


def msc_codes(text: str) -> list[str]:
    """MSC codes from ``\\subjclass``, ``\\msc``, ``\\begin{AMS}`` and similar."""
    codes: list[str] = []
    for m in re.finditer(r"\\(?:subjclass|msc|MSC|amsclass|mathclass)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}", text):
        codes += _MSC.findall(m.group(1))
    for m in re.finditer(r"\\begin\s*\{(AMS|msc|MSCcodes)\}(.*?)\\end\s*\{\1\}", text, re.DOTALL):
        codes += _MSC.findall(m.group(2))
    return list(dict.fromkeys(codes))


def keywords(text: str) -> list[str]:
    found = ""
    m = re.search(r"\\keywords\s*\{((?:[^{}]|\{[^{}]*\})*)\}", text)
    if m:
        found = m.group(1)
    else:
        m = re.search(r"\\begin\s*\{keywords?\}(.*?)\\end\s*\{keywords?\}", text, re.DOTALL)
        if m:
            found = m.group(1)
    parts = re.split(r"\s*(?:,|;|\\and|\\sep|\\cdot)\s*", " ".join(found.split()))
    return [p.strip().rstrip(".") for p in parts if p.strip()]
