"""Seed items for Proof2Hybrid: definitions and statement–proof pairs, cleaned for a model.

Two sources give seeds:

* :func:`stacks_seeds` reads chapters of The Stacks Project (``<root>/<chapter>.tex``,
  ``<root>/preamble.tex``, ``<root>/tags/tags``). Each chapter is flattened with
  :func:`theorembench.latex.flatten.flatten` (so ``\\input{preamble}`` is read and ``%``
  comments are gone), and yields one seed per ``definition`` environment and one per
  ``lemma`` / ``proposition`` / ``theorem`` whose very next thing (after white space) is
  a ``proof`` environment. A statement without such a proof is skipped and reported.
* :func:`paper_seeds` does the same for a stored paper (a
  :class:`~theorembench.latex.extract.PaperText`): definition-like environments (declared
  remark-like with a title containing "Definition") and lemma / proposition / theorem /
  corollary blocks immediately followed by a proof.

Cleaning (the same for statement and proof)
    * comment-like environments are removed with their lines: ``comment`` and every
      environment the document declares as ``\\newenvironment{X}{\\comment}{\\endcomment}``
      or ``\\excludecomment{X}``; for the Stacks Project also ``reference``, ``slogan`` and
      ``history`` (its preamble declares them so: they never reach the PDF);
    * the environment's optional argument (``\\begin{lemma}[Tube lemma]``) is taken out of
      the statement and kept in :attr:`Seed.note`;
    * macros are expanded with the definitions in force at the environment
      (``MacroTable.collect(text).at(pos)``): the Stacks preamble's ``\\def\\Spec`` etc.,
      or the paper's own macros (its style files included);
    * references are replaced by readable targets. Stacks: ``\\ref{lemma-foo}`` (same
      chapter) and ``\\ref{algebra-lemma-foo}`` (another chapter, prefixed as the
      preamble's ``\\externaldocument[algebra-]{algebra}`` says) become the tag from the
      tags file, "Lemma 01ZQ", with the type word taken from the label (lemma, section,
      definition, ...). Equations and list items are parenthesised: "(01AB)". Papers: the
      printed name of the labelled environment and the label, "Lemma (lem:key)"; an
      equation "(eq:main)". When the source already names the type right before the
      reference ("Lemma \\ref{x}", "Lemmas \\ref{x} and \\ref{y}"), only the tag / label is
      put in, so no "Lemma Lemma". An unknown label gives "Lemma [schemes-lemma-foo]"
      (Stacks: no tag) or the label with a type word guessed from its prefix (papers:
      "Lemma (lem:x)", else "(x)"), and a problem. ``\\hyperref[x]{text}`` becomes ``text``;
    * citations become a short bracketed form that keeps the key: ``\\cite{EGA}`` ->
      ``[EGA]``, ``\\cite[Example 6.1.24]{Engelking}`` -> ``[Engelking, Example 6.1.24]``,
      ``\\cite{A,B}`` -> ``[A; B]``;
    * ``\\label{...}`` is removed (with its line when it stood alone).

A seed's :attr:`Seed.text` is what a model is shown: the definition, or
``statement + "\\n\\nProof. " + proof``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from theorembench.latex.extract import INVISIBLE_MACROS, PaperText
from theorembench.latex.flatten import flatten
from theorembench.latex.macros import MacroTable
from theorembench.latex.refs import MATH_ENVS, LabelTarget, collect_labels
from theorembench.latex.scan import ScanError, find_environments, read_group, read_optional, skip_space
from theorembench.latex.theorems import TheoremDecl, declarations_with_builtins, theorem_blocks

__all__ = [
    "Seed",
    "count_labelled_environments",
    "paper_seeds",
    "read_tags",
    "stacks_seeds",
]

STACKS_DEFINITIONS = frozenset({"definition"})
STACKS_STATEMENTS = frozenset({"lemma", "proposition", "theorem"})
STACKS_COMMENT_ENVS = frozenset({"reference", "slogan", "history", "comment"})
PAPER_STATEMENT_KINDS = frozenset({"lemma", "proposition", "theorem", "corollary"})

# Stacks label types (the first part of a label) and how a reference to them reads
STACKS_TYPE_WORDS = {
    "lemma": "Lemma", "proposition": "Proposition", "theorem": "Theorem", "definition": "Definition",
    "example": "Example", "exercise": "Exercise", "situation": "Situation", "remark": "Remark",
    "remarks": "Remarks", "section": "Section", "subsection": "Subsection", "equation": "equation",
    "item": "item",
}  # fmt: skip
_PAREN_TYPES = frozenset({"equation", "item"})


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


def _seed_text(kind: str, statement: str, proof: str | None) -> str:
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


_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")


def _strip_labels(text: str) -> str:
    return _cut(text, [(m.start(), m.end()) for m in _LABEL.finditer(text)])


def _strip_envs(text: str, names: set[str] | frozenset[str]) -> str:
    return _cut(text, [(s.start, s.end) for s in find_environments(text, set(names))])


_COMMENT_DECL = re.compile(
    r"\\(?:re)?newenvironment\s*\{([^{}]+)\}\s*\{\s*\\comment\s*\}\s*\{\s*\\endcomment\s*\}"
    r"|\\excludecomment\s*\{([^{}]+)\}"
)


def _declared_comment_envs(text: str) -> set[str]:
    names = {"comment"}
    for m in _COMMENT_DECL.finditer(text):
        names.update(n.strip() for n in (m.group(1) or m.group(2)).split(",") if n.strip())
    return names


def _strip_note(content: str) -> str:
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
class _Target:
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


def _replace_refs(text: str, resolve: Callable[[str], _Target]) -> str:
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


def _clean(
    content: str,
    table: MacroTable,
    resolve: Callable[[str], _Target],
    comment_envs: set[str] | frozenset[str],
    problems: list[str],
    where: str,
) -> str:
    text = _strip_envs(content, comment_envs)
    expansion = table.expand(text)
    problems.extend(f"{where}: macro expansion: {e}" for e in expansion.errors)
    text = _replace_hyperrefs(expansion.text)
    text = _replace_refs(text, resolve)
    text = _replace_cites(text)
    text = _strip_labels(text)
    return text.strip()


_WS = re.compile(r"\s*")


def _following_proof(text: str, block_end: int, proofs: dict[int, object]):
    """The proof environment that starts right after block_end (only white space between), or None."""
    return proofs.get(_WS.match(text, block_end).end())


# --------------------------------------------------------------------------- Stacks Project


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


def _stacks_target(full: str, local: str, tag: str | None) -> _Target:
    kind = _stacks_type(local)
    word = STACKS_TYPE_WORDS.get(kind, kind.capitalize())
    ident = tag if tag else f"[{full}]"
    return _Target(word, ident, paren=kind in _PAREN_TYPES)


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
    local_labels = {m.group(0)[m.group(0).index("{") + 1 : -1].strip() for m in _LABEL.finditer(text)}
    comment_envs = STACKS_COMMENT_ENVS | _declared_comment_envs(text)
    macros = MacroTable.collect(text)
    decls = declarations_with_builtins(text)
    proofs = {s.start: s for s in find_environments(text, {"proof"})}

    def resolver(at: str) -> Callable[[str], _Target]:
        def resolve(label: str) -> _Target:
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
            proof_span = _following_proof(text, block.block_end, proofs)
            if proof_span is None:
                problems.append(f"{at}: {env} {block.label or '(no label)'} is not followed by a proof; skipped")
                continue
        table = macros.at(block.block_start)
        resolve = resolver(at)
        statement = _clean(_strip_note(block.content), table, resolve, comment_envs, problems, at)
        proof = None
        if proof_span is not None:
            body = _strip_note(text[proof_span.body_start : proof_span.body_end])
            proof = _clean(body, table, resolve, comment_envs, problems, where(proof_span.start))
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
                statement=statement, proof=proof, text=_seed_text(kind, statement, proof), origin=at,
                note=block.note.strip() if block.note else None,
            )  # fmt: skip
        )
    return seeds, problems


# --------------------------------------------------------------------------- papers


def _is_definition(decl: TheoremDecl) -> bool:
    return decl.kind == "remark" and "defin" in f"{decl.title} {decl.name}".lower()


_LABEL_PREFIX_WORDS = {
    "lem": "Lemma", "lemma": "Lemma", "thm": "Theorem", "theorem": "Theorem", "prop": "Proposition",
    "cor": "Corollary", "def": "Definition", "defn": "Definition", "definition": "Definition",
    "sec": "Section", "section": "Section", "ssec": "Section", "subsec": "Section", "rem": "Remark",
    "ex": "Example", "fig": "Figure", "tab": "Table", "conj": "Conjecture", "app": "Appendix",
}  # fmt: skip


def _paper_target(label: str, target: LabelTarget | None, decls: dict[str, TheoremDecl]) -> _Target:
    ident = f"({label})"
    prefix = re.split(r"[:\-_.]", label, maxsplit=1)[0].lower()
    if target is None or target.kind == "text":
        if prefix in ("eq", "eqn", "equation"):
            return _Target("", label, paren=True)
        return _Target(_LABEL_PREFIX_WORDS.get(prefix, ""), ident)
    if target.kind == "equation":
        return _Target("", label, paren=True)
    if target.kind == "item":
        return _Target("", label, paren=True)
    if target.kind == "section":
        return _Target("Section", ident)
    env = (target.env or "").rstrip("*")
    if env in MATH_ENVS:
        return _Target("", label, paren=True)
    if env in decls:
        return _Target(decls[env].title or env.capitalize(), ident)
    if env in ("figure", "wrapfigure"):
        return _Target("Figure", ident)
    if env == "table":
        return _Target("Table", ident)
    return _Target(_LABEL_PREFIX_WORDS.get(prefix, env.capitalize()), ident)


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
    comment_envs = _declared_comment_envs(styles + "\n" + text)
    proofs = {s.start: s for s in find_environments(text, {"proof", "proof*"})}

    def where(pos: int) -> str:
        try:
            file, line = paper_text.flat.locate(pos)
            return f"{file}:{line}"
        except ValueError:
            return "?"

    def resolver(at: str) -> Callable[[str], _Target]:
        def resolve(label: str) -> _Target:
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
            proof_span = _following_proof(text, block.block_end, proofs)
            if proof_span is None:
                name = f"{block.env_name} {block.label}" if block.label else f"{block.env_name} (no label)"
                problems.append(f"{paper_id} {at}: {name} has no proof right after it; skipped")
                continue
        table = macros.at(offset + block.block_start).extended(INVISIBLE_MACROS)
        resolve = resolver(at)
        statement = _clean(_strip_note(block.content), table, resolve, comment_envs, problems, f"{paper_id} {at}")
        proof = None
        if proof_span is not None:
            body = _strip_note(text[proof_span.body_start : proof_span.body_end])
            proof = _clean(body, table, resolve, comment_envs, problems, f"{paper_id} {where(proof_span.start)}")
        kind = "definition" if is_def else "statement_proof"
        seed_id = f"{paper_id}:{block.label}" if block.label else f"{paper_id}:{index}"
        if seed_id in used:
            seed_id = f"{paper_id}:{index}"
        used.add(seed_id)
        seeds.append(
            Seed(
                id=seed_id, source="paper", tag=None, label=block.label, chapter=paper_id,
                type="definition" if is_def else block.kind, kind=kind, statement=statement, proof=proof,
                text=_seed_text(kind, statement, proof), origin=at,
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
