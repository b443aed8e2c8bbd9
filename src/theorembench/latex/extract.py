"""Stage 3a: a paper's source folder -> its main theorem with context (the theorem record).

Pure text: the rule-based path (``latex.theorems``) finds the main theorem and builds
its record. When the rules find none, the paper pipeline's LLM fallback stage
(``pipeline.theorem_fallback``) looks for one and turns the statement it copies into a
record here. The record says which path produced it and lists every problem met.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.latex.context import keywords, msc_codes, recover_context, trim
from theorembench.latex.flatten import FlatDocument, find_main_file, flatten
from theorembench.latex.macros import MacroTable
from theorembench.latex.refs import collect_labels, expand_refs, ref_dict, refs_in
from theorembench.latex.scan import ScanError, read_group, skip_space
from theorembench.latex.theorems import (
    TheoremBlock,
    declarations_with_builtins,
    pick_main_theorem,
    sections,
)

EXTRACTOR_VERSION = 1

# Annotation macros of Lean blueprints (leanblueprint): invisible in print, noise in a statement.
# They override whatever the paper defines (some define them with expl3 code).
INVISIBLE_MACROS = "\n".join(
    [r"\renewcommand{\uses}[1]{}", r"\renewcommand{\lean}[1]{}", r"\renewcommand{\leanok}{}",
     r"\renewcommand{\proves}[1]{}", r"\renewcommand{\mathlibok}{}", r"\renewcommand{\notready}{}",
     r"\renewcommand{\discussion}[1]{}"]
)  # fmt: skip


@dataclass(frozen=True)
class ExtractSettings:
    context_chars: int = 4000
    full_context_chars: int = 12000
    intro_blocks: int = 6
    paper_blocks: int = 6
    llm_window_chars: int = 24000
    llm_fallback: bool = True
    llm_match_threshold: float = 0.9  # lowest fuzzy ratio of an LLM-copied statement to the paper's text

    def key(self) -> str:
        return json_digest({**asdict(self), "version": EXTRACTOR_VERSION}, 16, ascii_only=True)


@dataclass
class PaperText:
    """A flattened paper and what the whole-paper passes need."""

    root: Path
    flat: FlatDocument
    style_texts: list[str]
    problems: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.flat.text


def load_paper(root: Path, main: str | None = None) -> PaperText:
    main_file, candidates = (main, []) if main else find_main_file(root)
    if main_file is None:
        raise ExtractionError(f"no main .tex file (with \\documentclass and \\begin{{document}}) in {root}")
    flat = flatten(root, main_file)
    problems = list(flat.problems)
    for name, encoding in sorted(flat.encodings.items()):
        if encoding not in ("utf-8", "utf-8-sig", "ascii"):
            problems.append(f"{name} is not UTF-8: decoded as {encoding}")
    if len(candidates) > 1:
        problems.append(f"several main-file candidates {candidates}; chose {main_file}")
    styles = []
    for path in sorted(list(root.rglob("*.sty")) + list(root.rglob("*.cls"))):
        try:
            styles.append(path.read_text(errors="replace"))
        except OSError:
            continue
    return PaperText(root, flat, styles, problems)


class ExtractionError(RuntimeError):
    pass


def locate_statement(text: str, statement: str) -> tuple[int, int] | None:
    """Where an LLM-copied statement sits in the paper, compared whitespace-insensitively."""
    words = statement.split()
    if len(words) < 3:
        return None
    probe = r"\s+".join(re.escape(w) for w in words[: min(12, len(words))])
    m = re.search(probe, text)
    if not m:
        return None
    tail = r"\s+".join(re.escape(w) for w in words[-min(6, len(words)) :])
    end = re.search(tail, text[m.start() :])
    return m.start(), m.start() + end.end() if end else m.start() + len(statement)


# ---------------------------------------------------------------- the record


def _front_matter(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    m = re.search(r"\\title\s*(?:\[[^\]]*\])?\s*\{", text)
    if m:
        try:
            title, _ = read_group(text, skip_space(text, m.end() - 1))
            out["title"] = " ".join(re.sub(r"\\\\|\\thanks\{[^{}]*\}", " ", title).split())
        except ScanError:
            pass
    m = re.search(r"\\begin\s*\{abstract\}(.*?)\\end\s*\{abstract\}", text, re.DOTALL)
    if m:
        out["abstract"] = " ".join(m.group(1).split())
    return out


def build_record(
    paper: PaperText,
    block: TheoremBlock,
    *,
    path: str,
    reason: str,
    settings: ExtractSettings,
    intro=None,
) -> dict[str, Any]:
    """The theorem record with the released LiveMathematicianBench field names."""
    text = paper.text
    problems = list(paper.problems)
    targets, label_problems = collect_labels(text)
    problems += label_problems
    macros = MacroTable.collect("\n".join(paper.style_texts) + "\n" + text)
    offset = len("\n".join(paper.style_texts)) + 1
    table = macros.at(offset + block.block_start).extended(INVISIBLE_MACROS)

    own_labels = {lab for lab, t in targets.items() if block.block_start <= t.start < block.block_end}
    with_refs, unresolved = expand_refs(block.content, targets, skip=own_labels)
    if unresolved:
        problems.append(f"unresolved references in the theorem: {unresolved}")
    expansion = table.expand(with_refs)
    problems += [f"macro expansion: {e}" for e in expansion.errors]
    expanded_theorem = expansion.text.strip()

    ctx = recover_context(
        text, block.block_start, block.block_end, block.content, intro, sections(text), targets,
        intro_blocks=settings.intro_blocks, paper_blocks=settings.paper_blocks,
        context_chars=settings.context_chars, full_context_chars=settings.full_context_chars,
    )  # fmt: skip
    context = table.expand(ctx.context)
    full_context = table.expand(ctx.full_context)
    problems += [f"macro expansion (context): {e}" for e in context.errors + full_context.errors][:5]
    # expansion can lengthen the text: the budgets hold for what is stored
    context.text = trim(context.text, settings.context_chars)
    full_context.text = trim(full_context.text, settings.full_context_chars)

    theorem_refs = [lab for lab in refs_in(block.content) if lab not in own_labels]
    file, line = paper.flat.locate(block.block_start) if block.start_pos >= 0 else (None, None)
    return {
        "theorem": {
            "env_name": block.env_name,
            "content": block.content,
            "start_pos": block.start_pos,
            "end_pos": block.end_pos,
            "label": block.label,
        },
        "theorem_title": block.note,
        "theorem_kind": block.kind,
        "ref_dict": ref_dict(list(dict.fromkeys(theorem_refs + ctx.referenced)), targets),
        "pre_theorem_intro_text_len": len(ctx.pre_intro),
        "pre_theorem_intro_text": ctx.pre_intro,
        "post_theorem_intro_text_len": len(ctx.post_intro),
        "post_theorem_intro_text": ctx.post_intro,
        "context": context.text,
        "full_context": full_context.text,
        "expanded_theorem": expanded_theorem,
        "macros_expanded": dict(expansion.expanded),
        "source": {"file": file, "line": line, "main_file": paper.flat.main_file, "files": paper.flat.files},
        "extraction_path": path,
        "extraction_reason": reason,
        "msc": msc_codes(text),
        "keywords": keywords(text),
        **_front_matter(text),
        "problems": problems,
        "settings_key": settings.key(),
    }


def rule_path(paper: PaperText) -> tuple[TheoremBlock | None, Any, str]:
    decls = declarations_with_builtins(paper.text, paper.style_texts)
    pick = pick_main_theorem(paper.text, decls)
    return pick.block, pick.intro, pick.reason


def block_from_statement(paper: PaperText, statement: str, env: str | None) -> TheoremBlock:
    """A theorem block for an LLM-found statement, placed in the text where it can be found."""
    where = locate_statement(paper.text, statement)
    start, end = where if where else (-1, -1)
    return TheoremBlock(
        env_name=env or "theorem", kind="theorem", title="Theorem", content=statement.strip(),
        start_pos=start, end_pos=end, block_start=max(start, 0), block_end=max(end, 0), label=None, note=None,
    )  # fmt: skip


def extract_by_rules(paper: PaperText, settings: ExtractSettings) -> tuple[dict[str, Any] | None, str]:
    """(record or None, why) from the rule-based path alone. Never raises for a bad paper.

    When it finds nothing, the paper pipeline may ask an LLM (``pipeline.theorem_fallback``),
    which hands the statement it found back to :func:`record_from_statement`.
    """
    block, intro, reason = rule_path(paper)
    if block is None:
        return None, reason
    return build_record(paper, block, path="rule", reason=reason, settings=settings, intro=intro), reason


def record_from_statement(paper: PaperText, statement: str, env: str | None, *, reason: str,
                          settings: ExtractSettings) -> dict[str, Any]:  # fmt: skip
    """The theorem record for a statement found by other means than the rules (an LLM's copy)."""
    block = block_from_statement(paper, statement, env)
    record = build_record(paper, block, path="llm", reason=reason, settings=settings, intro=None)
    if block.start_pos < 0:
        record["problems"].append("the LLM's statement was not found verbatim in the source")
    return record
