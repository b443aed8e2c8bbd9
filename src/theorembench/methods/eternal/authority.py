"""Stage a's authority check: which signals of peer review or of a research affiliation a paper carries.

The paper takes its sources from reputable journals *and* vetted arXiv preprints, preferring
authors at recognised research institutions. A fresh month of arXiv rarely has a journal-ref or a
DOI yet, so asking for one (``authority = "journal"``) rejects most of it. The default rule,
``signals``, lets a paper through when it carries at least one of these signals:

* ``journal-ref`` or ``DOI`` in its arXiv metadata;
* a **publication note** in its arXiv comment ("accepted", "to appear", "published in", "in press",
  "forthcoming");
* a **listed venue** (``venues``) in its journal-ref, DOI or comment;
* a **listed institution** (``institutions``) in its affiliations; or, when no institution is
  listed, an **affiliation** that names a research institution (a university, an institute, an
  academy, a laboratory, a department or school, a research centre, CNRS, INRIA, Max Planck ...).

Affiliations are read from the arXiv metadata (when it has them) and from the paper's LaTeX
(``\\address``, ``\\affiliation``, ``\\affil``, ``\\institute``, ``\\institution``).

The other rules: ``journal`` (journal-ref or DOI only, the strict reading of "published in a
journal"), ``list`` (a listed venue or institution only) and ``any``. :func:`rule_counts` says how
many of a build's papers each rule passes; the build writes it to ``summary.json``.
"""

from __future__ import annotations

import re
from typing import Any

from theorembench.methods.eternal.config import Filter

RULES = ("any", "journal", "list", "signals")
_AFFIL = re.compile(r"\\(?:address|affiliation|affil|institute|institution)\s*(?:\[[^\]]*\])?\s*"
                    r"\{((?:[^{}]|\{[^{}]*\})*)\}")  # fmt: skip
_PUBLISHED = re.compile(r"\b(?:accepted|to appear|published in|published by|in press|forthcoming)\b", re.I)
_RESEARCH = re.compile(
    r"universit|institut|\bcollege\b|coll[eè]ge|[ée]cole|academ|akademi|laborator|department|d[ée]partement|"
    r"\bschool of\b|\bfaculty\b|research cent|\bcentre\b|\bcenter\b|\bcnrs\b|\binria\b|max[- ]planck", re.I)


def affiliations(paper: Any) -> list[str]:
    """The affiliations a paper states: its arXiv metadata's, then those written in its LaTeX."""
    found = [" ".join(str(a).split()) for a in paper.meta.get("affiliations") or []]
    if paper.latex:
        found += [" ".join(m.group(1).replace("\\\\", " ").split()) for m in _AFFIL.finditer(paper.latex)]
    return [a for a in found if a]


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def signals(paper: Any, cfg: Filter) -> dict[str, str]:
    """Every authority signal of a paper: ``kind -> what shows it`` (see the module doc for the kinds)."""
    meta = paper.meta
    journal, doi = (meta.get("journal_ref") or "").strip(), (meta.get("doi") or "").strip()
    comment = " ".join(str(meta.get("comment") or "").split())
    found: dict[str, str] = {}
    if journal:
        found["journal-ref"] = journal
    if doi:
        found["DOI"] = doi
    if m := _PUBLISHED.search(comment):
        found["publication note"] = _short(comment[m.start():])
    venue_text = f"{journal} {doi} {comment}".lower()
    venue = next((v for v in cfg.venues if v.strip() and v.lower() in venue_text), None)
    if venue:
        found["venue"] = venue
    places = affiliations(paper)
    joined = " | ".join(places).lower()
    inst = next((i for i in cfg.institutions if i.strip() and i.lower() in joined), None)
    if inst:
        found["institution"] = inst
    elif not cfg.institutions:
        place = next((p for p in places if _RESEARCH.search(p)), None)
        if place:
            found["affiliation"] = _short(place)
    return found


def passes(rule: str, found: dict[str, str]) -> bool:
    if rule == "any":
        return True
    if rule == "journal":
        return "journal-ref" in found or "DOI" in found
    if rule == "list":
        return "venue" in found or "institution" in found
    return bool(found)


_MISSING = {
    "journal": "no journal-ref or DOI",
    "list": "no listed venue in journal-ref, DOI or comment, and no listed institution in the affiliations",
    "signals": "no authority signal: no journal-ref, DOI, publication note in the arXiv comment, listed venue, "
               "or affiliation with a research institution",
}  # fmt: skip


def check(paper: Any, cfg: Filter) -> tuple[bool, str]:
    """``(passed, reason)`` of a paper under the configured rule (a local paper is trusted with ``trust_local``)."""
    if cfg.authority == "any":
        return True, "authority not required (authority = any)"
    found = signals(paper, cfg)
    if passes(cfg.authority, found):
        shown = [(k, v) for k, v in found.items() if passes(cfg.authority, {k: v})]
        return True, "; ".join(f"{k} {v}" for k, v in shown)
    if paper.source == "local" and cfg.trust_local:
        return True, "added from a local file (trusted)"
    return False, _MISSING[cfg.authority]


def rule_counts(papers: list[Any], cfg: Filter) -> dict[str, Any]:
    """How many of ``papers`` each rule passes (local papers trusted as the build trusts them), and each signal."""
    by_rule = {rule: 0 for rule in RULES}
    by_signal: dict[str, int] = {}
    for paper in papers:
        found = signals(paper, cfg)
        trusted = paper.source == "local" and cfg.trust_local
        for rule in RULES:
            by_rule[rule] += bool(trusted or passes(rule, found))
        for kind in found:
            by_signal[kind] = by_signal.get(kind, 0) + 1
    return {"papers": len(papers), "rule": cfg.authority, "passed": by_rule, "signals": by_signal}


__all__ = ["RULES", "affiliations", "check", "passes", "rule_counts", "signals"]
