"""Seeds from The Stacks Project: one per definition and per statement with its proof.

:func:`stacks_seeds` reads chapters of The Stacks Project (``<root>/<chapter>.tex``,
``<root>/preamble.tex``, ``<root>/tags/tags``). Each chapter is flattened with
:func:`theorembench.latex.flatten.flatten` (so ``\\input{preamble}`` is read and ``%``
comments are gone), and yields one seed per ``definition`` environment and one per
``lemma`` / ``proposition`` / ``theorem`` whose very next thing (after white space) is
a ``proof`` environment. A statement without such a proof is skipped and reported.

The text is cleaned as :mod:`theorembench.methods.hybrid.seed_cleaning` describes, with
the Stacks preamble's macros (``\\def\\Spec`` etc.) and its comment-like environments
``reference``, ``slogan`` and ``history``. References become the tag from the tags file:
``\\ref{lemma-foo}`` (same chapter) and ``\\ref{algebra-lemma-foo}`` (another chapter,
prefixed as the preamble's ``\\externaldocument[algebra-]{algebra}`` says) read "Lemma
01ZQ", with the type word taken from the label (lemma, section, definition, ...).
Equations and list items are parenthesised: "(01AB)". An unknown label gives "Lemma
[schemes-lemma-foo]" (no tag) and a problem.

:func:`count_labelled_environments` counts a chapter's environments by a plain regex
pass, a cross-check for the seed counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from theorembench.latex.flatten import flatten
from theorembench.latex.macros import MacroTable
from theorembench.latex.scan import find_environments
from theorembench.latex.theorems import declarations_with_builtins, theorem_blocks
from theorembench.methods.hybrid.seed_cleaning import (
    LABEL,
    Seed,
    Target,
    clean,
    compose_text,
    declared_comment_envs,
    following_proof,
    strip_note,
)

__all__ = ["count_labelled_environments", "read_tags", "stacks_seeds"]

STACKS_DEFINITIONS = frozenset({"definition"})
STACKS_STATEMENTS = frozenset({"lemma", "proposition", "theorem"})
STACKS_COMMENT_ENVS = frozenset({"reference", "slogan", "history", "comment"})

# Stacks label types (the first part of a label) and how a reference to them reads
STACKS_TYPE_WORDS = {
    "lemma": "Lemma", "proposition": "Proposition", "theorem": "Theorem", "definition": "Definition",
    "example": "Example", "exercise": "Exercise", "situation": "Situation", "remark": "Remark",
    "remarks": "Remarks", "section": "Section", "subsection": "Subsection", "equation": "equation",
    "item": "item",
}  # fmt: skip
_PAREN_TYPES = frozenset({"equation", "item"})


def read_tags(path: Path) -> dict[str, str]:
    """The Stacks tags file as ``{full_label: tag}`` (``#`` lines and malformed lines skipped)."""
    tags: dict[str, str] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        tag, sep, label = line.partition(",")
        if sep and tag and label:
            tags.setdefault(label.strip(), tag.strip())
    return tags


_EXTERNAL = re.compile(r"\\externaldocument\s*\[([^\]]*)-\]\s*\{([^{}]*)\}")
_CHAPTER_SKIP = frozenset({"preamble", "chapters"})


def _chapter_files(root: Path, chapters: list[str] | None) -> list[Path]:
    if chapters is not None:
        files = []
        for name in chapters:
            stem = name[:-4] if name.endswith(".tex") else name
            path = root / f"{stem}.tex"
            if not path.is_file():
                raise FileNotFoundError(f"no Stacks chapter {stem!r}: {path} is not a file")
            files.append(path)
        return files
    found = []
    for path in sorted(root.glob("*.tex")):
        if path.stem in _CHAPTER_SKIP:
            continue
        try:
            head = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "\\begin{document}" in head:
            found.append(path)
    return found


def _split_label(full: str, chapters: list[str]) -> tuple[str | None, str]:
    """(chapter, local label) of a full label, by the longest known chapter prefix."""
    for chap in chapters:  # longest first
        if full.startswith(chap + "-") and len(full) > len(chap) + 1:
            return chap, full[len(chap) + 1 :]
    return None, full


def _stacks_type(local_label: str) -> str:
    return local_label.split("-", 1)[0]


def _stacks_target(full: str, local: str, tag: str | None) -> Target:
    kind = _stacks_type(local)
    word = STACKS_TYPE_WORDS.get(kind, kind.capitalize())
    ident = tag if tag else f"[{full}]"
    return Target(word, ident, paren=kind in _PAREN_TYPES)


def stacks_seeds(root: Path, chapters: list[str] | None = None) -> tuple[list[Seed], list[str]]:
    """Seeds of the Stacks Project chapters under root (all of them, or those named); and problems.

    ``chapters`` are file names with or without ``.tex``; a named chapter that is not there
    raises :class:`FileNotFoundError`. A missing tags file is a problem (seeds then have no
    tag and an id from their label).
    """
    root = Path(root)
    problems: list[str] = []
    tags_path = root / "tags" / "tags"
    if tags_path.is_file():
        tags = read_tags(tags_path)
    else:
        tags = {}
        problems.append(f"no tags file at {tags_path}: seeds have no tags")
    seeds: list[Seed] = []
    for path in _chapter_files(root, chapters):
        found, probs = _chapter_seeds(root, path, tags)
        seeds += found
        problems += probs
    return seeds, problems


def _chapter_seeds(root: Path, path: Path, tags: dict[str, str]) -> tuple[list[Seed], list[str]]:
    chapter = path.stem
    problems: list[str] = []
    flat = flatten(root, path.name)
    problems += [f"{chapter}: {p}" for p in flat.problems]
    text = flat.text
    if not text:
        return [], problems

    def where(pos: int) -> str:
        try:
            file, line = flat.locate(pos)
            return f"{file}:{line}"
        except ValueError:
            return f"{path.name}:?"

    known_chapters = {chapter} | {m.group(2).strip() for m in _EXTERNAL.finditer(text)}
    known_chapters |= {m.group(1).strip() for m in _EXTERNAL.finditer(text)}
    by_length = sorted(known_chapters, key=len, reverse=True)
    local_labels = {m.group(0)[m.group(0).index("{") + 1 : -1].strip() for m in LABEL.finditer(text)}
    comment_envs = STACKS_COMMENT_ENVS | declared_comment_envs(text)
    macros = MacroTable.collect(text)
    decls = declarations_with_builtins(text)
    proofs = {s.start: s for s in find_environments(text, {"proof"})}

    def resolver(at: str) -> Callable[[str], Target]:
        def resolve(label: str) -> Target:
            own = f"{chapter}-{label}"
            if label in local_labels or own in tags:
                full, local = own, label
            elif label in tags:
                full = label
                local = _split_label(label, by_length)[1]
            else:
                chap, rest = _split_label(label, by_length)
                full, local = (label, rest) if chap is not None else (own, label)
            tag = tags.get(full)
            if tag is None:
                problems.append(f"{at}: reference to {label!r} ({full}) has no tag")
            return _stacks_target(full, local, tag)

        return resolve

    seeds: list[Seed] = []
    for block in theorem_blocks(text, decls):
        env = block.env_name.rstrip("*")
        if env not in STACKS_DEFINITIONS and env not in STACKS_STATEMENTS:
            continue
        at = where(block.block_start)
        proof_span = None
        if env in STACKS_STATEMENTS:
            proof_span = following_proof(text, block.block_end, proofs)
            if proof_span is None:
                problems.append(f"{at}: {env} {block.label or '(no label)'} is not followed by a proof; skipped")
                continue
        table = macros.at(block.block_start)
        resolve = resolver(at)
        statement = clean(strip_note(block.content), table, resolve, comment_envs, problems, at)
        proof = None
        if proof_span is not None:
            body = strip_note(text[proof_span.body_start : proof_span.body_end])
            proof = clean(body, table, resolve, comment_envs, problems, where(proof_span.start))
        full = f"{chapter}-{block.label}" if block.label else None
        tag = tags.get(full) if full else None
        if full is None:
            problems.append(f"{at}: {env} without a label")
        elif tag is None:
            problems.append(f"{at}: label {full} has no tag")
        kind = "definition" if env in STACKS_DEFINITIONS else "statement_proof"
        seed_id = f"stacks:{tag}" if tag else f"stacks:{full or f'{chapter}-{block.block_start}'}"
        seeds.append(
            Seed(
                id=seed_id, source="stacks", tag=tag, label=full, chapter=chapter, type=env, kind=kind,
                statement=statement, proof=proof, text=compose_text(kind, statement, proof), origin=at,
                note=block.note.strip() if block.note else None,
            )  # fmt: skip
        )
    return seeds, problems


# --------------------------------------------------------------------------- counting (for checks)

_COUNT_ENV = re.compile(
    r"\\begin\{(definition|lemma|proposition|theorem)\}(.*?)\\end\{\1\}(\s*\\begin\{proof\})?", re.DOTALL
)
_PERCENT = re.compile(r"(?<!\\)%[^\n]*")


def count_labelled_environments(chapter_text: str) -> dict[str, int]:
    """Counts by a plain regex pass (no environment parser): a cross-check for the seed counts.

    Keys: ``definition``, ``lemma``, ``proposition``, ``theorem`` (environments),
    ``labelled`` (of those, how many hold a ``\\label``), ``statements`` (lemmas +
    propositions + theorems), ``with_proof`` / ``without_proof`` (statements whose
    ``\\end{..}`` is / is not followed, after white space, by ``\\begin{proof}``), and
    ``seeds`` (definitions + statements with a proof).
    """
    text = _PERCENT.sub("", chapter_text)
    counts = dict.fromkeys(
        ["definition", "lemma", "proposition", "theorem", "labelled", "statements", "with_proof", "without_proof"], 0
    )
    for m in _COUNT_ENV.finditer(text):
        env = m.group(1)
        counts[env] += 1
        if "\\label{" in m.group(2):
            counts["labelled"] += 1
        if env != "definition":
            counts["statements"] += 1
            counts["with_proof" if m.group(3) else "without_proof"] += 1
    counts["seeds"] = counts["definition"] + counts["with_proof"]
    return counts
