"""The seed data type and the cleaning both seed sources share (Stacks Project and papers).

A :class:`Seed` is one definition or statement–proof pair; its :attr:`Seed.text` is what a
model is shown: the definition, or ``statement + "\\n\\nProof. " + proof``
(:func:`compose_text`).

Cleaning (:func:`clean`, the same for statement and proof)
    * comment-like environments are removed with their lines: ``comment`` and every
      environment the document declares as ``\\newenvironment{X}{\\comment}{\\endcomment}``
      or ``\\excludecomment{X}`` (:func:`declared_comment_envs`); for the Stacks Project also
      ``reference``, ``slogan`` and ``history`` (its preamble declares them so: they never
      reach the PDF);
    * the environment's optional argument (``\\begin{lemma}[Tube lemma]``) is taken out of
      the statement (:func:`strip_note`) and kept in :attr:`Seed.note`;
    * macros are expanded with the definitions in force at the environment (the caller
      passes ``MacroTable.collect(text).at(pos)``);
    * references are replaced by readable targets: each source gives a resolver from a
      label to a :class:`Target` (type word and identifier). When the source already names
      the type right before the reference ("Lemma \\ref{x}", "Lemmas \\ref{x} and
      \\ref{y}"), only the identifier is put in, so no "Lemma Lemma"; equations and list
      items are parenthesised. ``\\hyperref[x]{text}`` becomes ``text``;
    * citations become a short bracketed form that keeps the key: ``\\cite{EGA}`` ->
      ``[EGA]``, ``\\cite[Example 6.1.24]{Engelking}`` -> ``[Engelking, Example 6.1.24]``,
      ``\\cite{A,B}`` -> ``[A; B]``;
    * ``\\label{...}`` is removed (with its line when it stood alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

from theorembench.latex.macros import MacroTable
from theorembench.latex.scan import ScanError, find_environments, read_group, read_optional, skip_space

__all__ = [
    "LABEL",
    "Seed",
    "Target",
    "clean",
    "compose_text",
    "declared_comment_envs",
    "following_proof",
    "strip_note",
]

# --------------------------------------------------------------------------- the seed


@dataclass
class Seed:
    """One seed item, cleaned for a model (see the module docstring for the cleaning)."""

    id: str  # "stacks:<TAG>" | "<paper_id>:<label or block index>"
    source: str  # "stacks" | "paper"
    tag: str | None  # Stacks tag, None for papers
    label: str | None  # full label: "schemes-lemma-separated"; a paper's own label
    chapter: str | None  # Stacks chapter ("schemes"); for papers the paper id
    type: str  # "definition" | "lemma" | "proposition" | "theorem" | "corollary"
    kind: str  # "definition" | "statement_proof"
    statement: str
    proof: str | None  # None for definitions
    text: str  # what a model is shown
    origin: str  # "<file>:<line>" of the \begin
    note: str | None = None  # the environment's optional argument, e.g. "Tube lemma"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Seed:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def compose_text(kind: str, statement: str, proof: str | None) -> str:
    """What a model is shown: the definition, or the statement and its proof."""
    if kind == "definition":
        return statement
    return f"{statement}\n\nProof. {proof}"


# --------------------------------------------------------------------------- text surgery


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """Remove spans; a span that filled its line(s) takes the line break with it."""
    out: list[str] = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            continue  # nested in a span already removed
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        if not text[line_start:start].strip() and not text[end:line_end].strip():
            start, end = max(line_start, last), min(line_end + 1, len(text))
        out.append(text[last:start])
        last = end
    out.append(text[last:])
    return "".join(out)


LABEL = re.compile(r"\\label\s*\{[^{}]*\}")


def _strip_labels(text: str) -> str:
    return _cut(text, [(m.start(), m.end()) for m in LABEL.finditer(text)])


def _strip_envs(text: str, names: set[str] | frozenset[str]) -> str:
    return _cut(text, [(s.start, s.end) for s in find_environments(text, set(names))])


_COMMENT_DECL = re.compile(
    r"\\(?:re)?newenvironment\s*\{([^{}]+)\}\s*\{\s*\\comment\s*\}\s*\{\s*\\endcomment\s*\}"
    r"|\\excludecomment\s*\{([^{}]+)\}"
)


def declared_comment_envs(text: str) -> set[str]:
    names = {"comment"}
    for m in _COMMENT_DECL.finditer(text):
        names.update(n.strip() for n in (m.group(1) or m.group(2)).split(",") if n.strip())
    return names


def strip_note(content: str) -> str:
    """Drop a leading optional argument (``[Tube lemma]``) from an environment's content."""
    if content.lstrip().startswith("["):
        try:
            _, end = read_optional(content, 0)
            return content[end:]
        except ScanError:
            return content
    return content


_CITE = re.compile(r"\\(?:cite|citep|citet|citealp|citealt|Cite|parencite|textcite|autocite|footcite)\*?(?![A-Za-z@])")


def _replace_cites(text: str) -> str:
    """``\\cite[opt]{a,b}`` -> ``[a; b, opt]`` (a natbib pre-note ``[see][p. 3]`` goes first)."""
    out: list[str] = []
    last = 0
    pos = 0
    while True:
        m = _CITE.search(text, pos)
        if not m:
            break
        try:
            opt1, p = read_optional(text, m.end())
            opt2, p = read_optional(text, p) if opt1 is not None else (None, p)
            keys, end = read_group(text, skip_space(text, p))
        except ScanError:
            pos = m.end()
            continue
        pre, post = (opt1, opt2) if opt2 is not None else (None, opt1)
        body = "; ".join(k.strip() for k in keys.split(",") if k.strip())
        if pre and pre.strip():
            body = f"{pre.strip()} {body}"
        if post and post.strip():
            body = f"{body}, {post.strip()}"
        out.append(text[last : m.start()])
        out.append(f"[{body}]")
        last = pos = end
    out.append(text[last:])
    return "".join(out)


_HYPERREF = re.compile(r"\\hyperref\s*\[[^\]]*\]\s*(?=\{)")


def _replace_hyperrefs(text: str) -> str:
    out: list[str] = []
    last = 0
    for m in _HYPERREF.finditer(text):
        if m.start() < last:
            continue
        try:
            inner, end = read_group(text, m.end())
        except ScanError:
            continue
        out.append(text[last : m.start()])
        out.append(inner)
        last = end
    out.append(text[last:])
    return "".join(out)


@dataclass(frozen=True)
class Target:
    """A reference's readable target: a type word and an identifier."""

    word: str  # "Lemma", "Section"; "" for none
    ident: str  # "01ZQ", "[schemes-lemma-foo]", "(lem:key)"
    paren: bool = False  # equations and items: "(ident)", no word


_REF = re.compile(
    r"\\(ref|eqref|cref|Cref|autoref|Autoref|vref|Vref|nameref|labelcref|pageref|cpageref)\*?\s*\{([^{}]*)\}"
)
# A type word right before a reference: the source names the target itself ("Lemma \\ref{x}").
# Nouns that are also ordinary English ("for example \\ref{x}", "in case ...") count only capitalised.
_TYPE_NOUNS = (
    "lemma|proposition|theorem|definition|remark|section|subsection|subsubsection|chapter|corollary|"
    "equation|figure|table|appendix|item|part|thm|lem|prop|cor|def|defn|sec|eq|eqn|fig|tab|rem"
)
_CAPITAL_NOUNS = (
    "Example|Exercise|Situation|Step|Case|Claim|Conjecture|Assumption|Hypothesis|Property|Condition|Algorithm|"
    "Observation|Notation|Construction|Fact|Question|Problem|Axiom|Formula|Statement|Ex"
)
_NAMED_BEFORE = re.compile(
    rf"(?:(?i:\b(?:{_TYPE_NOUNS})(?:s|es)?\.?|\bcorollaries|\bappendices)"
    rf"|\b(?:{_CAPITAL_NOUNS})(?:s|es)?\.?|\bProperties|\bHypotheses|§)[\s~]*\Z"
)
_LIST_GAP = re.compile(r"\s*(?:,\s*(?:and|or)?|and|or|--?|&)\s*", re.IGNORECASE)


def _replace_refs(text: str, resolve: Callable[[str], Target]) -> str:
    """Replace ``\\ref``-like commands with readable targets (see the module docstring)."""
    out: list[str] = []
    last = 0
    prev_end: int | None = None  # end of the previous reference, when its type word came from the source
    for m in _REF.finditer(text):
        cmd = m.group(1)
        labels = [x.strip() for x in m.group(2).split(",") if x.strip()]
        out.append(text[last : m.start()])
        last = m.end()
        if not labels:
            prev_end = None
            continue
        window = text[max(0, m.start() - 40) : m.start()]
        named = bool(_NAMED_BEFORE.search(window)) or (
            prev_end is not None and _LIST_GAP.fullmatch(text[prev_end : m.start()]) is not None
        )
        parenthesised = text[: m.start()].rstrip(" ~").endswith("(") and text[m.end() :].lstrip(" ~").startswith(")")
        parts = []
        for i, label in enumerate(labels):
            t = resolve(label)
            if t.paren or cmd == "eqref":
                parts.append(t.ident if parenthesised and len(labels) == 1 else f"({t.ident})")
            elif (named and i == 0) or not t.word:
                parts.append(t.ident)
            else:
                parts.append(f"{t.word} {t.ident}")
        out.append(" and ".join(parts))
        prev_end = m.end() if named else None
    out.append(text[last:])
    return "".join(out)


def clean(
    content: str,
    table: MacroTable,
    resolve: Callable[[str], Target],
    comment_envs: set[str] | frozenset[str],
    problems: list[str],
    where: str,
) -> str:
    """An environment's content cleaned for a model (module docstring); problems go to ``problems``."""
    text = _strip_envs(content, comment_envs)
    expansion = table.expand(text)
    problems.extend(f"{where}: macro expansion: {e}" for e in expansion.errors)
    text = _replace_hyperrefs(expansion.text)
    text = _replace_refs(text, resolve)
    text = _replace_cites(text)
    text = _strip_labels(text)
    return text.strip()


_WS = re.compile(r"\s*")


def following_proof(text: str, block_end: int, proofs: dict[int, object]):
    """The proof environment that starts right after block_end (only white space between), or None."""
    return proofs.get(_WS.match(text, block_end).end())

