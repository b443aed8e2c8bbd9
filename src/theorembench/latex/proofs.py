"""A theorem's own proof in a flattened paper, or none.

A main theorem stated in the Introduction is usually proved much later, and the
first ``proof`` environment after it belongs to some other lemma. The proof is
looked for in this order, and the first one found is returned:

1. a ``proof`` environment whose optional argument names the theorem
   (``[Proof of Theorem~\\ref{thm:main}]``, ``[Proof of Theorem 1.2]``,
   ``[Proof of the classical Carleson theorem]``);
2. a later restatement followed directly by a proof: a theorem-like block with the
   same label, with a note naming the theorem (``\\begin{theorem*}[Theorem~\\ref{..}]``,
   ``[Theorem 1.2, restated]``) or with the same statement, or the ``restatable``
   macro (``\\thmMain*``);
3. headings that announce the proof: a section, subsection or ``\\paragraph`` (or a
   bold or italic run-in heading) whose title begins with "Proof" and names the
   theorem, or whose opening lines say that they prove it (``\\section{Proof of the
   upper bound} We now prove the upper bound in \\Cref{main}``); all of them, joined;
4. a proof directly after the theorem (nothing but a short sentence in between), unless
   it says it proves something else.

A theorem is named by a reference to its label, by its printed title and number
(numbers are inferred from the counters: global, within section, within subsection,
or a letter), or by its note. Pure text: nothing here calls a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from theorembench.latex.scan import EnvSpan, ScanError, find_environments, read_group, read_optional, skip_space
from theorembench.latex.theorems import Section, TheoremDecl, declarations_with_builtins, sections, theorem_blocks

_REF_CMDS = r"(?:ref|cref|Cref|autoref|nameref|labelcref|thmref|vref|Vref)"
_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")
_HEADING = re.compile(r"\\(section|subsection|subsubsection|paragraph|subparagraph)\*?\s*(?:\[[^\]]*\])?\s*\{")
_RUN_IN = re.compile(r"(?:\\(?:textbf|textit|emph|textsc|underline)\s*\{|\{\\(?:bf|it|em|sc)\s+)\s*(Proofs? of\b)")
_STOP = re.compile(r"\\(?:section|subsection|subsubsection|paragraph|chapter|appendix|bibliography|printbibliography)"
                   r"(?![A-Za-z])|\\end\s*\{document\}")  # fmt: skip
# a title that names a numbered or referenced result: the section proves that, not ours
_OTHER = re.compile(r"\\" + _REF_CMDS + r"\b|\b(?:theorem|lemma|proposition|corollary|claim)s?\s*~?\s*[\dA-Z]",
                    re.IGNORECASE)  # fmt: skip
_ADJACENT_GAP = 300  # characters of prose allowed between a theorem and "its" proof
_OPENING = 800  # characters of a section's opening read for "we now prove ... \ref{label}"


@dataclass(frozen=True)
class FoundProof:
    text: str
    how: str  # "named proof" | "restatement" | "proof heading" | "following proof"
    start: int  # offset of what was found (the proof environment or the first heading)
    heading: str  # the line that identified it

    def describe(self) -> str:
        return f"{self.how} at offset {self.start}: {' '.join(self.heading.split())[:160]}"


@dataclass(frozen=True)
class TheoremNames:
    labels: frozenset[str]
    titles: tuple[str, ...]  # printed titles, e.g. ("Theorem",)
    numbers: frozenset[str]  # plausible printed numbers, e.g. {"1", "1.1", "1.0.1"}
    note: str  # normalised optional argument ("" when it has none or it is too short to be a name)
    macro: str | None  # restatable macro name, without backslash


def _norm(text: str) -> str:
    text = re.sub(r"\\[A-Za-z]+\*?", " ", text.replace("~", " "))
    text = re.sub(r"[{}$\\]", " ", text)
    return " ".join(text.lower().split())


def names_theorem(phrase: str, names: TheoremNames) -> bool:
    """Whether a phrase (a proof's argument, a heading) refers to the theorem."""
    for m in re.finditer(r"\\" + _REF_CMDS + r"\*?\s*\{([^{}]*)\}", phrase):
        if any(part.strip() in names.labels for part in m.group(1).split(",")):
            return True
    if names.numbers:
        titles = "|".join(re.escape(t) for t in names.titles) + r"|Thm\.?"
        nums = "|".join(re.escape(n) for n in sorted(names.numbers, key=len, reverse=True))
        pattern = rf"(?:{titles})s?\s*(?:~|\\ |\s)*(?:{nums})(?![\w.]*\d)(?!\w)"
        if re.search(pattern, phrase.replace("\\,", " "), re.IGNORECASE):
            return True
    return bool(names.note) and names.note in _norm(phrase)


def theorem_names(text: str, *, start: int, label: str | None, note: str | None, env: str | None,
                  decls: dict[str, TheoremDecl] | None = None) -> TheoremNames:  # fmt: skip
    decls = decls if decls is not None else declarations_with_builtins(text)
    env = (env or "theorem").strip()
    decl = decls.get(env.rstrip("*"))
    titles = tuple(dict.fromkeys(t for t in ((decl.title if decl else env.capitalize()), "Theorem") if t))
    begin = _block_start(text, start)
    macro = None
    m = re.match(r"\\begin\s*\{restatable\*?\}", text[begin:])
    if m:
        try:
            _note, pos = read_optional(text, begin + m.end())
            _inner, pos = read_group(text, skip_space(text, pos))
            macro, _ = read_group(text, skip_space(text, pos))
            macro = macro.strip().lstrip("\\") or None
        except ScanError:
            macro = None
    numbers = _printed_numbers(text, begin, env, decls)
    cleaned = _norm(note or "")
    return TheoremNames(frozenset([label] if label else []), titles, frozenset(numbers),
                        cleaned if len(cleaned) >= 6 else "", macro)  # fmt: skip


def _block_start(text: str, content_start: int) -> int:
    """Offset of the ``\\begin`` that opens the block whose content starts at ``content_start``."""
    head = text[max(0, content_start - 3000) : content_start]
    k = head.rfind("\\begin")
    return max(0, content_start - 3000) + k if k >= 0 else content_start


def _counter(decl: TheoremDecl, decls: dict[str, TheoremDecl]) -> str | None:
    seen: set[str] = set()
    while decl.shared_counter:
        if decl.shared_counter not in decls or decl.shared_counter in seen:
            return None  # shared with a counter that is not a theorem's (equation...): not inferred
        seen.add(decl.name)
        decl = decls[decl.shared_counter]
    return decl.name


def _printed_numbers(text: str, begin: int, env: str, decls: dict[str, TheoremDecl]) -> set[str]:
    decl = decls.get(env.rstrip("*"))
    if decl is None or env.endswith("*") or decl.starred:
        return set()
    counter = _counter(decl, decls)
    if counter is None:
        return set()
    members = {n for n, d in decls.items() if not d.starred and _counter(d, decls) == counter}
    before = [b.block_start for b in theorem_blocks(text, decls)
              if b.env_name in members and b.block_start <= begin]  # fmt: skip
    numbers = {str(len(before))}
    heads = [(m.start(), m.group(1)) for m in re.finditer(r"\\(section|subsection)(?![A-Za-z*])", text[:begin])]
    sec_starts = [p for p, kind in heads if kind == "section"]
    if sec_starts:
        in_sec = [p for p in before if p > sec_starts[-1]]
        subs = [p for p, kind in heads if kind == "subsection" and p > sec_starts[-1]]
        in_sub = [p for p in in_sec if not subs or p > subs[-1]]
        numbers |= {f"{len(sec_starts)}.{len(in_sec)}", f"{len(sec_starts)}.{len(subs)}.{len(in_sub)}"}
    if re.search(r"\\renewcommand\s*\{?\\the" + re.escape(counter) + r"\}?\s*\{\s*\\Alph", text[:begin]):
        numbers.add(chr(64 + len(before)) if 0 < len(before) <= 26 else "")
    literal = re.findall(r"\\(?:renewcommand\*?\s*\{?|def)\\the" + re.escape(counter) + r"\}?\s*\{([^{}\\]{1,8})\}",
                         text[max(0, begin - 400) : begin])  # fmt: skip
    if literal:  # \renewcommand{\thetheorem}{A} just before the theorem
        numbers.add(literal[-1].strip())
    return {n for n in numbers if n}


def find_theorem_proof(text: str, *, start: int, end: int, label: str | None = None, note: str | None = None,
                       env: str | None = None, statement: str | None = None,
                       limit: int = 6000) -> FoundProof | None:  # fmt: skip
    """The proof of the theorem whose content spans ``text[start:end]``, or None when the paper gives none."""
    decls = declarations_with_builtins(text)
    names = theorem_names(text, start=start, label=label, note=note, env=env, decls=decls)
    m = re.match(r"\s*\\end\s*\{[^{}]*\}", text[end:])
    after = end + (m.end() if m else 0)
    proofs = [p for p in find_environments(text, {"proof", "proof*"}) if p.start >= after]
    for p in proofs:
        arg, _ = _proof_arg(text, p)
        if arg and names_theorem(arg, names):
            return _found(text, p, "named proof", limit)
    found = _restated(text, after, names, decls, proofs, statement or text[start:end], limit)
    if found:
        return found
    found = _proof_headings(text, after, names, limit)
    if found:
        return found
    nxt = _adjacent(text, after, proofs)
    if nxt is not None:
        arg, _ = _proof_arg(text, nxt)
        if not (arg and re.search(r"\bof\b", arg, re.IGNORECASE)):  # "[Proof of Lemma 3]" proves something else
            return _found(text, nxt, "following proof", limit)
    return None


def _proof_arg(text: str, p: EnvSpan) -> tuple[str | None, int]:
    try:
        return read_optional(text, p.body_start) if text[p.body_start : p.body_end].lstrip().startswith("[") else (
            None, p.body_start)  # fmt: skip
    except ScanError:
        return None, p.body_start


def _found(text: str, p: EnvSpan, how: str, limit: int, heading: str | None = None) -> FoundProof:
    _arg, body = _proof_arg(text, p)
    head = heading or text[p.start : body]
    return FoundProof(text[body : p.body_end].strip()[:limit], how, p.start, head)


def _adjacent(text: str, pos: int, proofs: list[EnvSpan]) -> EnvSpan | None:
    """The proof environment that follows ``pos`` with at most a short sentence in between."""
    nxt = next((p for p in proofs if p.start >= pos), None)
    if nxt is None:
        return None
    gap = _LABEL.sub("", re.sub(r"(?<!\\)%[^\n]*", "", text[pos : nxt.start]))
    if len(gap.strip()) > _ADJACENT_GAP or "\\begin" in gap or _STOP.search(gap):
        return None
    return nxt


def _restated(text: str, after: int, names: TheoremNames, decls: dict[str, TheoremDecl], proofs: list[EnvSpan],
              statement: str, limit: int) -> FoundProof | None:  # fmt: skip
    own = _norm(_LABEL.sub("", statement))
    candidates: list[tuple[int, int, str]] = []  # (start, end, heading)
    for b in theorem_blocks(text, decls):
        if b.block_start < after:
            continue
        same_label = bool(b.label) and b.label in names.labels
        body = _LABEL.sub("", b.content)
        if b.note is not None:
            body = body.replace(f"[{b.note}]", "", 1)
        if same_label or (b.note and names_theorem(b.note, names)) or (len(own) > 40 and _norm(body) == own):
            candidates.append((b.block_start, b.block_end, text[b.block_start : b.start_pos][:200]))
    if names.macro:
        for m in re.finditer(r"\\" + re.escape(names.macro) + r"\*?(?![A-Za-z])", text[after:]):
            candidates.append((after + m.start(), after + m.end(), m.group(0)))
    for begin, stop, heading in sorted(candidates):
        p = _adjacent(text, stop, proofs)
        if p is not None:
            return _found(text, p, "restatement", limit, heading=heading)
    return None


def _proof_headings(text: str, after: int, names: TheoremNames, limit: int) -> FoundProof | None:
    parts: list[tuple[int, int, str]] = []
    all_sections = sections(text)
    for sec in all_sections:
        if sec.start < after or not re.match(r"\s*(?:the\s+)?proofs?\b", _norm(sec.title)):
            continue
        opening = text[sec.body_start : sec.body_start + _OPENING]
        # "We now prove the upper bound in \Cref{main}": by label or number, not by a loose note match
        announces = bool(re.search(r"\bprov", opening, re.IGNORECASE)) and names_theorem(opening, replace(names, note=""))
        if names_theorem(sec.title, names) or announces:
            if not any(s <= sec.start < e for s, e, _ in parts):
                parts.append((sec.start, sec.end, text[sec.start : sec.body_start]))
                parts += _continued(text, sec, all_sections)
    for m in list(re.finditer(r"\\paragraph\*?\s*\{", text[after:])) + list(_RUN_IN.finditer(text[after:])):
        begin = after + m.start()
        try:
            title, body = read_group(text, begin + m.group(0).index("{"))
        except ScanError:
            continue
        if not re.match(r"\s*proofs? of\b", _norm(title)) or not names_theorem(title, names):
            continue
        if any(s <= begin < e for s, e, _ in parts):
            continue
        stop = _STOP.search(text, body)
        nxt_env = re.search(r"\\begin\s*\{(?!proof|equation|align|gather|multline|enumerate|itemize)", text[body:])
        end = min(stop.start() if stop else len(text), body + nxt_env.start() if nxt_env else len(text))
        parts.append((begin, end, text[begin:body]))
    if not parts:
        return None
    parts.sort()
    share = max(500, limit // len(parts))
    joined = "\n\n".join(f"{' '.join(h.split())}\n{text[s + len(h) : e].strip()[:share]}" for s, e, h in parts)
    return FoundProof(joined[:limit], "proof heading", parts[0][0], " / ".join(" ".join(h.split()) for *_, h in parts))


def _continued(text: str, first: Section, all_sections: list[Section]) -> list[tuple[int, int, str]]:
    """Sibling sections right after ``first`` that go on with the proof ("Proof of the lower bound")."""
    out: list[tuple[int, int, str]] = []
    end = first.end
    for sec in all_sections:
        if sec.start < end or sec.level < first.level:
            continue
        if sec.level > first.level:
            continue
        if sec.start != end or not re.match(r"\s*(?:the\s+)?proofs?\b", _norm(sec.title)) or _OTHER.search(sec.title):
            break
        out.append((sec.start, sec.end, text[sec.start : sec.body_start]))
        end = sec.end
    return out


__all__ = ["FoundProof", "TheoremNames", "find_theorem_proof", "names_theorem", "theorem_names"]
