"""Theorem-like environments: their declarations, and the main theorem of a paper.

Declarations are read in every form papers use: ``\\newtheorem`` (shared counter,
numbered within, starred; amsthm and ntheorem), ``\\theoremstyle``, thmtools'
``\\declaretheorem``, Springer's ``\\spnewtheorem`` and ``restatable``.
Each declared environment gets a *kind* from its printed title and name, which
drives the main-theorem rule: inside the Introduction, a theorem beats any
custom theorem-like environment, which beats a proposition, corollary or lemma;
axioms and remark-like environments (definitions, examples, conjectures,
questions...) are never the main theorem.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from theorembench.latex.scan import ScanError, find_environments, read_group, read_optional, skip_space

REMARK_LIKE = (
    "remark", "note", "notation", "example", "definition", "conjecture", "question", "problem",
    "exercise", "claim", "observation", "heuristic", "principle", "proof", "counterexample",
    "assumption", "hypothesis", "convention", "case", "step", "construction", "algorithm",
    "setup", "setting", "terminology", "warning", "caution", "discussion", "acknowledg",
    "history", "slogan", "reference", "fact", "notes", "summary", "idea", "exposition",
)  # fmt: skip
KIND_RANK = {"theorem": 0, "other": 1, "proposition": 2, "corollary": 3, "lemma": 4}  # theorem-like blocks
# what the rule path may take as the main theorem (the paper's stage 3a): a theorem environment first, then a custom
# theorem-like one ("Main Result", "Théorème"); never a lemma, proposition or corollary, which go to the LLM fallback
MAIN_KIND_RANK = {"theorem": 0, "other": 1}
# environments many classes predefine (llncs, svjour, amsbook variants): used when a paper declares none
BUILTIN = {
    "theorem": "Theorem", "thm": "Theorem", "proposition": "Proposition", "prop": "Proposition",
    "lemma": "Lemma", "lem": "Lemma", "corollary": "Corollary", "cor": "Corollary",
    "definition": "Definition", "defn": "Definition", "remark": "Remark", "example": "Example",
    "conjecture": "Conjecture", "claim": "Claim", "axiom": "Axiom",
}  # fmt: skip


@dataclass(frozen=True)
class TheoremDecl:
    name: str  # environment name, e.g. "thm"
    title: str  # printed title, e.g. "Theorem"
    kind: str  # theorem | proposition | corollary | lemma | axiom | remark | other
    starred: bool = False
    shared_counter: str | None = None
    within: str | None = None
    style: str | None = None
    form: str = "newtheorem"  # newtheorem | declaretheorem | spnewtheorem | builtin


def classify(title: str, name: str) -> str:
    t = f"{title} {name}".lower()
    words = re.findall(r"[a-z]+", title.lower()) or re.findall(r"[a-z]+", name.lower())
    head = " ".join(words)
    if "axiom" in t:
        return "axiom"
    if "theorem" in head or "main result" in head or head in ("thm", "theo"):
        return "theorem"
    if any(head.startswith(r) or f" {r}" in f" {head}" for r in REMARK_LIKE):
        return "remark"
    if "proposition" in head or head in ("prop",):
        return "proposition"
    if "corollar" in head or head in ("cor",):
        return "corollary"
    if "lemma" in head or head in ("lem",):
        return "lemma"
    if "theorem" in t or re.search(r"\bthm", t):
        return "theorem"
    return "other"


_DECL = re.compile(r"\\(newtheorem|spnewtheorem|declaretheorem|theoremstyle|renewtheorem)(\*?)(?![A-Za-z])")


def find_declarations(text: str) -> dict[str, TheoremDecl]:
    """Every theorem-like environment the text declares, by environment name."""
    decls: dict[str, TheoremDecl] = {}
    style: str | None = None
    for m in _DECL.finditer(text):
        cmd, star = m.group(1), bool(m.group(2))
        pos = m.end()
        try:
            if cmd == "theoremstyle":
                style, _ = read_group(text, skip_space(text, pos))
                style = style.strip()
                continue
            if cmd == "declaretheorem":
                opts, pos = read_optional(text, pos)
                names, pos = read_group(text, skip_space(text, pos))
                opts2, pos = read_optional(text, pos)  # newer syntax: options after the name
                options = _keyvals(",".join(o for o in (opts, opts2) if o))
                for name in (n.strip() for n in names.split(",") if n.strip()):
                    title = options.get("name") or options.get("title") or name.capitalize()
                    decls[name] = TheoremDecl(
                        name=name, title=_clean_title(title), kind=classify(title, name), starred=star
                        or options.get("numbered") == "no", shared_counter=options.get("sibling")
                        or options.get("numberlike") or options.get("sharenumber"),
                        within=options.get("numberwithin") or options.get("parent"),
                        style=options.get("style") or style, form="declaretheorem",
                    )  # fmt: skip
                continue
            # \newtheorem{name}[shared]{Title}[within], \spnewtheorem{name}[shared]{Title}[within]{hf}{bf}
            name, pos = read_group(text, skip_space(text, pos))
            shared, pos = read_optional(text, pos)
            title, pos = read_group(text, skip_space(text, pos))
            within, pos = read_optional(text, pos)
        except ScanError:
            continue
        name = name.strip()
        if not name or "#" in name:
            continue  # a declaration inside a macro definition
        decls[name] = TheoremDecl(
            name=name, title=_clean_title(title), kind=classify(_clean_title(title), name), starred=star,
            shared_counter=(shared or "").strip() or None, within=(within or "").strip() or None,
            style=style, form="spnewtheorem" if cmd == "spnewtheorem" else "newtheorem",
        )  # fmt: skip
    return decls


def _clean_title(title: str) -> str:
    title = re.sub(r"\\[A-Za-z]+\s*", " ", title)
    return " ".join(title.replace("{", " ").replace("}", " ").split())


def _keyvals(spec: str) -> dict[str, str]:
    out: dict[str, str] = {}
    depth, cur, parts = 0, "", []
    for ch in spec:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip().strip("{}").strip()
    return out


def declarations_with_builtins(text: str, extra_texts: list[str] | None = None) -> dict[str, TheoremDecl]:
    """Declarations from the document and its local class/style files; class defaults if none."""
    decls: dict[str, TheoremDecl] = {}
    for extra in extra_texts or []:
        decls.update(find_declarations(extra))
    decls.update(find_declarations(text))
    for name, title in BUILTIN.items():
        if name not in decls and re.search(r"\\begin\s*\{" + re.escape(name) + r"\*?\}", text):
            decls[name] = TheoremDecl(name, title, classify(title, name), form="builtin")
    return decls


# ----------------------------------------------------------------- sections

_SECTION = re.compile(r"\\(part|chapter|section|subsection|subsubsection)(\*?)\s*(?=[\[{])")
_LEVEL = {"part": -1, "chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3}
_INTRO = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?\s*)?(?:introduction|intro)\b", re.IGNORECASE)
_END_MARKERS = re.compile(r"\\(appendix|bibliography|printbibliography|end\s*\{document\})(?![A-Za-z])")


@dataclass(frozen=True)
class Section:
    level: int
    title: str
    start: int  # offset of the heading command
    body_start: int  # after the heading
    end: int  # where the next heading of the same or a higher level starts


def sections(text: str) -> list[Section]:
    heads: list[tuple[int, str, int, int]] = []
    for m in _SECTION.finditer(text):
        pos = m.end()
        try:
            _short, pos = read_optional(text, pos)
            title, pos = read_group(text, skip_space(text, pos))
        except ScanError:
            continue
        heads.append((_LEVEL[m.group(1)], " ".join(title.split()), m.start(), pos))
    ends = [m.start() for m in _END_MARKERS.finditer(text)]
    out = []
    for i, (level, title, start, body_start) in enumerate(heads):
        end = len(text)
        for later in heads[i + 1 :]:
            if later[0] <= level:
                end = later[2]
                break
        end = min([end, *[e for e in ends if e > body_start]])
        out.append(Section(level, title, start, body_start, end))
    return out


def introduction(text: str) -> Section | None:
    """The paper's Introduction section ("Introduction", "1. Introduction and main results", starred)."""
    for sec in sections(text):
        if sec.level <= 1 and _INTRO.match(_clean_title(sec.title) or sec.title):
            return sec
    return None


# ----------------------------------------------------------------- environments


@dataclass
class TheoremBlock:
    env_name: str  # the declared environment (for restatable: the wrapped one)
    kind: str
    title: str  # printed title of the environment
    content: str  # text between \begin{..} and \end{..} (optional argument and \label included)
    start_pos: int  # offset of content in the text
    end_pos: int
    block_start: int  # offset of \begin
    block_end: int  # offset after \end{...}
    label: str | None
    note: str | None  # the optional argument, e.g. "classical Carleson"
    wrapper: str | None = None  # "restatable" when wrapped

    def to_dict(self) -> dict:
        return asdict(self)


_LABEL = re.compile(r"\\label\s*\{([^{}]*)\}")


def theorem_blocks(text: str, decls: dict[str, TheoremDecl]) -> list[TheoremBlock]:
    """Every theorem-like block of the text, in order."""
    names = set(decls) | {f"{n}*" for n in decls} | {"restatable", "restatable*"}
    blocks = []
    for span in find_environments(text, names):
        if span.name.startswith("restatable"):
            block = _restatable(text, span, decls)
            if block:
                blocks.append(block)
            continue
        decl = decls[span.name.rstrip("*")]
        content = text[span.body_start : span.body_end]
        note, _ = read_optional(content, 0) if content.lstrip().startswith("[") else (None, 0)
        blocks.append(
            TheoremBlock(
                env_name=span.name, kind=decl.kind, title=decl.title, content=content,
                start_pos=span.body_start, end_pos=span.body_end, block_start=span.start,
                block_end=span.end, label=_first_label(content), note=note,
            )  # fmt: skip
        )
    return blocks


def _restatable(text: str, span, decls: dict[str, TheoremDecl]) -> TheoremBlock | None:
    pos = span.body_start
    try:
        note, pos = read_optional(text, pos)
        inner, pos = read_group(text, skip_space(text, pos))
        _macro, pos = read_group(text, skip_space(text, pos))
    except ScanError:
        return None
    inner = inner.strip()
    decl = decls.get(inner.rstrip("*")) or TheoremDecl(inner, inner.capitalize(), classify(inner, inner))
    content = text[pos : span.body_end]
    if note is not None:
        content = f"[{note}]" + content
    return TheoremBlock(
        env_name=inner, kind=decl.kind, title=decl.title, content=content, start_pos=pos,
        end_pos=span.body_end, block_start=span.start, block_end=span.end,
        label=_first_label(content), note=note, wrapper=span.name,
    )  # fmt: skip


def _first_label(content: str) -> str | None:
    m = _LABEL.search(content)
    return m.group(1).strip() if m else None


@dataclass
class MainTheoremPick:
    block: TheoremBlock | None
    intro: Section | None
    reason: str
    candidates: list[TheoremBlock]


def pick_main_theorem(text: str, decls: dict[str, TheoremDecl]) -> MainTheoremPick:
    """The rule-based fast path: the Introduction's first theorem block, else its first custom theorem-like block;
    an Introduction with only lemmas, propositions or corollaries gives none (the LLM fallback decides)."""
    intro = introduction(text)
    if intro is None:
        return MainTheoremPick(None, None, "no Introduction heading", [])
    in_intro = [b for b in theorem_blocks(text, decls) if intro.body_start <= b.block_start < intro.end]
    eligible = [b for b in in_intro if b.kind in MAIN_KIND_RANK]
    if not eligible:
        kinds = sorted({b.kind for b in in_intro})
        why = "no theorem-like environment in the Introduction that may be the main theorem"
        if kinds:
            why += f" (only {', '.join(kinds)} blocks; a lemma, proposition or corollary is never taken)"
        return MainTheoremPick(None, intro, why, in_intro)
    best = min(MAIN_KIND_RANK[b.kind] for b in eligible)
    chosen = next(b for b in eligible if MAIN_KIND_RANK[b.kind] == best)
    return MainTheoremPick(chosen, intro, f"first {chosen.kind} block of the Introduction", in_intro)
