"""Seeds from a stored paper: definition-like environments and statements with their proof.

:func:`paper_seeds` reads a :class:`~theorembench.latex.extract.PaperText`: definition-like
environments (declared remark-like with a title containing "Definition") and lemma /
proposition / theorem / corollary blocks immediately followed by a proof.

The text is cleaned as :mod:`theorembench.methods.hybrid.seed_cleaning` describes, with
the paper's own macros (its style files included). A reference becomes the printed name
of the labelled environment and the label, "Lemma (lem:key)"; an equation "(eq:main)".
An unknown label gets a type word guessed from its prefix ("Lemma (lem:x)", else "(x)")
and a problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from theorembench.latex.extract import INVISIBLE_MACROS, PaperText
from theorembench.latex.macros import MacroTable
from theorembench.latex.refs import MATH_ENVS, LabelTarget, collect_labels
from theorembench.latex.scan import find_environments
from theorembench.latex.theorems import TheoremDecl, declarations_with_builtins, theorem_blocks
from theorembench.methods.hybrid.seed_cleaning import (
    Seed,
    Target,
    clean,
    compose_text,
    declared_comment_envs,
    following_proof,
    strip_note,
)

__all__ = ["paper_seeds"]

PAPER_STATEMENT_KINDS = frozenset({"lemma", "proposition", "theorem", "corollary"})


def _is_definition(decl: TheoremDecl) -> bool:
    return decl.kind == "remark" and "defin" in f"{decl.title} {decl.name}".lower()


_LABEL_PREFIX_WORDS = {
    "lem": "Lemma", "lemma": "Lemma", "thm": "Theorem", "theorem": "Theorem", "prop": "Proposition",
    "cor": "Corollary", "def": "Definition", "defn": "Definition", "definition": "Definition",
    "sec": "Section", "section": "Section", "ssec": "Section", "subsec": "Section", "rem": "Remark",
    "ex": "Example", "fig": "Figure", "tab": "Table", "conj": "Conjecture", "app": "Appendix",
}  # fmt: skip


def _paper_target(label: str, target: LabelTarget | None, decls: dict[str, TheoremDecl]) -> Target:
    ident = f"({label})"
    prefix = re.split(r"[:\-_.]", label, maxsplit=1)[0].lower()
    if target is None or target.kind == "text":
        if prefix in ("eq", "eqn", "equation"):
            return Target("", label, paren=True)
        return Target(_LABEL_PREFIX_WORDS.get(prefix, ""), ident)
    if target.kind == "equation":
        return Target("", label, paren=True)
    if target.kind == "item":
        return Target("", label, paren=True)
    if target.kind == "section":
        return Target("Section", ident)
    env = (target.env or "").rstrip("*")
    if env in MATH_ENVS:
        return Target("", label, paren=True)
    if env in decls:
        return Target(decls[env].title or env.capitalize(), ident)
    if env in ("figure", "wrapfigure"):
        return Target("Figure", ident)
    if env == "table":
        return Target("Table", ident)
    return Target(_LABEL_PREFIX_WORDS.get(prefix, env.capitalize()), ident)


def paper_seeds(paper_text: PaperText, paper_id: str) -> tuple[list[Seed], list[str]]:
    """Seeds of a loaded paper (:func:`theorembench.latex.extract.load_paper`); and problems.

    Ids are ``<paper_id>:<label>``, or ``<paper_id>:<n>`` (n = the block's index among the
    paper's theorem-like blocks) for an unlabelled block.
    """
    text = paper_text.text
    problems: list[str] = []
    styles = "\n".join(paper_text.style_texts)
    offset = len(styles) + 1
    macros = MacroTable.collect(styles + "\n" + text)
    decls = declarations_with_builtins(text, paper_text.style_texts)
    targets, label_problems = collect_labels(text)
    problems += [f"{paper_id}: {p}" for p in label_problems]
    comment_envs = declared_comment_envs(styles + "\n" + text)
    proofs = {s.start: s for s in find_environments(text, {"proof", "proof*"})}

    def where(pos: int) -> str:
        try:
            file, line = paper_text.flat.locate(pos)
            return f"{file}:{line}"
        except ValueError:
            return "?"

    def resolver(at: str) -> Callable[[str], Target]:
        def resolve(label: str) -> Target:
            target = targets.get(label)
            if target is None:
                problems.append(f"{paper_id} {at}: unknown label {label!r}")
            return _paper_target(label, target, decls)

        return resolve

    seeds: list[Seed] = []
    used: set[str] = set()
    for index, block in enumerate(theorem_blocks(text, decls)):
        decl = decls.get(block.env_name.rstrip("*")) or TheoremDecl(block.env_name, block.title, block.kind)
        is_def = _is_definition(decl)
        if not is_def and block.kind not in PAPER_STATEMENT_KINDS:
            continue
        at = where(block.block_start)
        proof_span = None
        if not is_def:
            proof_span = following_proof(text, block.block_end, proofs)
            if proof_span is None:
                name = f"{block.env_name} {block.label}" if block.label else f"{block.env_name} (no label)"
                problems.append(f"{paper_id} {at}: {name} has no proof right after it; skipped")
                continue
        table = macros.at(offset + block.block_start).extended(INVISIBLE_MACROS)
        resolve = resolver(at)
        statement = clean(strip_note(block.content), table, resolve, comment_envs, problems, f"{paper_id} {at}")
        proof = None
        if proof_span is not None:
            body = strip_note(text[proof_span.body_start : proof_span.body_end])
            proof = clean(body, table, resolve, comment_envs, problems, f"{paper_id} {where(proof_span.start)}")
        kind = "definition" if is_def else "statement_proof"
        seed_id = f"{paper_id}:{block.label}" if block.label else f"{paper_id}:{index}"
        if seed_id in used:
            seed_id = f"{paper_id}:{index}"
        used.add(seed_id)
        seeds.append(
            Seed(
                id=seed_id, source="paper", tag=None, label=block.label, chapter=paper_id,
                type="definition" if is_def else block.kind, kind=kind, statement=statement, proof=proof,
                text=compose_text(kind, statement, proof), origin=at,
                note=block.note.strip() if block.note else None,
            )  # fmt: skip
        )
    return seeds, problems

