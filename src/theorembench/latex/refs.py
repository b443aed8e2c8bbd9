"""Labels and cross-references: what ``\\ref{x}`` points at, and theorems made self-contained."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from theorembench.latex.scan import ScanError, find_environments, read_group

MATH_ENVS = {
    "equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*",
    "eqnarray", "eqnarray*", "flalign", "flalign*", "alignat", "alignat*", "subequations",
    "displaymath", "split",
}  # fmt: skip
REF_COMMANDS = ("ref", "eqref", "cref", "Cref", "autoref", "cpageref", "Cpageref", "pageref", "nameref",
                "labelcref", "crefrange", "Crefrange", "vref", "Vref", "hyperref")  # fmt: skip
_REF = re.compile(r"\\(" + "|".join(REF_COMMANDS) + r")\*?\s*\{([^{}]*)\}")
_LABEL = re.compile(r"\\label\s*\{([^{}]*)\}")
_TAG = re.compile(r"\\tag\*?\s*\{([^{}]*)\}")
_HEADING = re.compile(r"\\(chapter|section|subsection|subsubsection|paragraph)\*?\s*(?:\[[^\]]*\])?\s*\{")


@dataclass
class LabelTarget:
    label: str
    kind: str  # "equation" | "environment" | "section" | "item" | "text"
    env: str | None
    content: str  # LaTeX of the labelled block (the whole environment, or the heading title)
    start: int
    end: int
    tag: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def collect_labels(text: str) -> tuple[dict[str, LabelTarget], list[str]]:
    """Every ``\\label`` with what it labels; duplicates keep the first and are reported."""
    envs = find_environments(text)
    targets: dict[str, LabelTarget] = {}
    problems: list[str] = []
    for m in _LABEL.finditer(text):
        label = m.group(1).strip()
        if not label or "#" in label:
            continue
        target = _target(text, m.start(), label, envs)
        if label in targets:
            problems.append(f"duplicate label {label!r}: kept the first definition")
            continue
        targets[label] = target
    return targets, problems


def _target(text: str, pos: int, label: str, envs) -> LabelTarget:
    heading = _heading_before(text, pos)
    if heading is not None:
        title, start, end = heading
        return LabelTarget(label, "section", None, title, start, end)
    enclosing = [e for e in envs if e.body_start <= pos < e.body_end and e.name not in ("document",)]
    if enclosing:
        env = min(enclosing, key=lambda e: e.end - e.start)  # innermost
        if env.name in ("enumerate", "itemize", "description"):
            item_start = text.rfind("\\item", env.body_start, pos)
            nxt = text.find("\\item", pos, env.body_end)
            end = nxt if nxt >= 0 else env.body_end
            return LabelTarget(label, "item", env.name, text[max(item_start, env.body_start) : end].strip(),
                               item_start, end)  # fmt: skip
        # a label inside a math environment nested in a theorem points at the equation
        block = text[env.start : env.end]
        tag = _TAG.search(block)
        kind = "equation" if env.name in MATH_ENVS else "environment"
        return LabelTarget(label, kind, env.name, block, env.start, env.end, tag.group(1) if tag else None)
    for open_, close in (("\\[", "\\]"), ("$$", "$$")):
        start = text.rfind(open_, 0, pos)
        if start >= 0:
            end = text.find(close, pos)
            if end >= 0 and text.find(close, start + len(open_), pos) < 0:
                return LabelTarget(label, "equation", None, text[start : end + len(close)], start, end + len(close))
    para_start = text.rfind("\n\n", 0, pos)
    para_end = text.find("\n\n", pos)
    para_start = 0 if para_start < 0 else para_start + 2
    para_end = len(text) if para_end < 0 else para_end
    return LabelTarget(label, "text", None, text[para_start:para_end].strip(), para_start, para_end)


def _heading_before(text: str, pos: int) -> tuple[str, int, int] | None:
    """A heading whose title ends right before the label (``\\section{X}\\label{y}``)."""
    window_start = max(0, pos - 400)
    last = None
    for m in _HEADING.finditer(text, window_start, pos):
        last = m
    if last is None:
        return None
    try:
        title, end = read_group(text, last.end() - 1)
    except ScanError:
        return None
    if text[end:pos].strip():
        return None
    return " ".join(title.split()), last.start(), end


def refs_in(text: str) -> list[str]:
    """Labels referenced in the text, in order, without repeats."""
    out: list[str] = []
    for m in _REF.finditer(text):
        for label in m.group(2).split(","):
            label = label.strip()
            if label and label not in out:
                out.append(label)
    return out


def _inline_equation(block: str) -> str:
    body = re.sub(r"^\\begin\s*\{[^{}]*\}|\\end\s*\{[^{}]*\}$", "", block.strip())
    body = body.strip()
    if body.startswith("\\[") and body.endswith("\\]"):
        body = body[2:-2]
    elif body.startswith("$$") and body.endswith("$$"):
        body = body[2:-2]
    body = _LABEL.sub("", body)
    body = re.sub(r"\\(nonumber|notag)\b", "", body)
    body = body.replace("&", "").replace("\\\\", ",\\quad ")
    body = " ".join(body.split())
    return re.sub(r"[\s.,;]+$", "", body)  # a display's closing punctuation belongs to its sentence


def describe(target: LabelTarget) -> str:
    """What a reference to the target becomes in an expanded text."""
    if target.kind == "equation":
        return f"\\({_inline_equation(target.content)}\\)"
    if target.kind == "section":
        return f"(the section \u201c{target.content}\u201d)"
    if target.kind == "environment" and (target.env or "").rstrip("*") in ("figure", "table", "wrapfigure"):
        caption = re.search(r"\\caption\s*(?:\[[^\]]*\])?\s*\{", target.content)
        text = ""
        if caption:
            try:
                text, _ = read_group(target.content, caption.end() - 1)
            except ScanError:
                text = ""
        kind = "table" if (target.env or "").startswith("table") else "figure"
        return f"(the {kind}" + (f": {' '.join(_LABEL.sub('', text).split())})" if text else ")")
    if target.kind == "environment":
        body = target.content
        m = re.match(r"\\begin\s*\{[^{}]*\}", body)
        if m:
            body = body[m.end() : body.rfind("\\end")]
        body = _LABEL.sub("", body).strip()
        return f"[{' '.join(body.split())}]"
    return f"[{' '.join(_LABEL.sub('', target.content).split())}]"


def expand_refs(text: str, targets: dict[str, LabelTarget], *, skip: set[str] | None = None) -> tuple[str, list[str]]:
    """Replace references by the labelled content; returns (text, unresolved labels)."""
    unresolved: list[str] = []
    skip = skip or set()

    def repl(m: re.Match[str]) -> str:
        parts = []
        for label in (p.strip() for p in m.group(2).split(",")):
            target = targets.get(label)
            if target is None or label in skip:
                if target is None and label not in unresolved:
                    unresolved.append(label)
                parts.append(m.group(0) if len(m.group(2).split(",")) == 1 else f"\\ref{{{label}}}")
                continue
            parts.append(describe(target))
        return " and ".join(parts)

    return _REF.sub(repl, text), unresolved


def ref_dict(labels: list[str], targets: dict[str, LabelTarget]) -> dict[str, str]:
    """The released field: label -> LaTeX of the labelled block."""
    return {label: targets[label].content for label in labels if label in targets}


def strip_labels(text: str) -> str:
    return _LABEL.sub("", text)

