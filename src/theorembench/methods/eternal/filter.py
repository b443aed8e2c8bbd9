"""Stage a, the paper filter: recency, authority and the computability judge; and the paper text it reads.

Recency and authority need no model: they are recomputed on every build from the
paper's stored metadata, so they follow the current settings and metadata.

* **Recency**, at month granularity: a paper passes when it appeared at most
  ``months_back`` months before the reference date (and not after it). The date is the
  arXiv ``published`` date, else the paper's month.
* **Authority**, by ``authority`` (:mod:`authority`): ``signals`` (the default) wants one sign of
  peer review or of a research affiliation (journal-ref, DOI, a publication note in the arXiv
  comment, a listed venue or institution, an affiliation with a research institution), which a
  fresh arXiv month can show; ``journal`` wants a journal-ref or DOI; ``list`` a listed venue or
  institution; ``any`` lets every paper through.
* A paper added from a local file has no arXiv metadata: the user chose it, so with
  ``trust_local`` (the default) it passes both checks, noted as such. This is what lets
  the offline demo's sample papers through under every rule.

**Computability** is a judge's structured verdict (computable yes/no, a reason, and the
candidate results with their parameters, domains and output): see :func:`judge_computability`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from theorembench.latex.context import trim
from theorembench.latex.extract import ExtractionError, load_paper
from theorembench.llm import LLM, GenerateSettings
from theorembench.methods.eternal import authority as A
from theorembench.methods.eternal import prompts as P
from theorembench.methods.eternal.config import Filter

_MONTH = re.compile(r"(\d{4})-(\d{2})")


@dataclass
class PaperInput:
    """What the build reads of one stored paper."""

    id: str
    source: str
    title: str
    abstract: str
    latex: str | None  # the flattened LaTeX, when the paper's folder could be read
    theorem: str | None  # the main theorem of the stored record, if any
    meta: dict[str, Any] = field(default_factory=dict)
    published: str | None = None
    month: str | None = None
    record_msc: list[str] = field(default_factory=list)

    def text(self, chars: int) -> str:
        """What a model reads of the paper: title, abstract, main theorem and the body, within ``chars``."""
        parts = [f"Title: {self.title}" if self.title else "", f"Abstract: {self.abstract}" if self.abstract else ""]
        if self.theorem:
            parts.append(f"Main theorem:\n{self.theorem}")
        if self.latex:
            body = self.latex
            start = body.find("\\begin{document}")
            parts.append("Paper (LaTeX):\n" + (body[start:] if start >= 0 else body))
        return trim("\n\n".join(p for p in parts if p), chars)


def load_input(paper: dict[str, Any], theorem: dict[str, Any] | None) -> PaperInput:
    """A stored paper row (and its theorem row, if any) as the build reads it."""
    latex = None
    folder = paper.get("folder")
    if folder and Path(folder).is_dir():
        try:
            latex = load_paper(Path(folder)).text
        except (ExtractionError, OSError):
            texs = sorted(Path(folder).rglob("*.tex"))
            latex = "\n".join(p.read_text(errors="replace") for p in texs) or None
    record = (theorem or {}).get("record") or {}
    title = paper.get("title") or record.get("title") or ""
    abstract = paper.get("abstract") or record.get("abstract") or ""
    return PaperInput(
        id=paper["id"], source=paper.get("source") or "", title=title, abstract=abstract, latex=latex,
        theorem=record.get("expanded_theorem"), meta=paper.get("meta") or {}, published=paper.get("published"),
        month=paper.get("month"), record_msc=list(record.get("msc") or []),
    )  # fmt: skip


@dataclass
class Check:
    passed: bool
    reason: str


def paper_date(paper: PaperInput) -> date | None:
    for value in (paper.published, paper.meta.get("published"), paper.month):
        if value and (m := _MONTH.match(str(value))):
            return date(int(m.group(1)), int(m.group(2)), 1)
    return None


def recency(paper: PaperInput, cfg: Filter) -> Check:
    ref = cfg.reference()
    when = paper_date(paper)
    if when is None:
        if paper.source == "local" and cfg.trust_local:
            return Check(True, "no date (added from a local file)")
        return Check(False, "no publication date")
    months = (ref.year * 12 + ref.month) - (when.year * 12 + when.month)
    stamp = f"{when:%Y-%m}"
    if months < 0:
        return Check(False, f"published {stamp}, after the reference date {ref.isoformat()}")
    if months > cfg.months_back:
        return Check(False, f"published {stamp}, more than {cfg.months_back} months before {ref.isoformat()}")
    return Check(True, f"published {stamp}")


def authority(paper: PaperInput, cfg: Filter) -> Check:
    """The authority check under ``cfg.authority`` (the signals and rules: :mod:`authority`)."""
    passed, reason = A.check(paper, cfg)
    return Check(passed, reason)


async def judge_computability(llm: LLM, model: str, paper: PaperInput, chars: int,
                              settings: GenerateSettings) -> dict[str, Any]:  # fmt: skip
    """The judge's verdict: ``{"computable", "reason", "results": [{statement, parameters, output, kind}]}``."""
    obj, _ = await llm.generate_json(model, P.computability_messages(paper.text(chars)), P.COMPUTABILITY_SCHEMA,
                                     settings, purpose="eternal.computability")  # fmt: skip
    results = [r for r in obj.get("results") or [] if isinstance(r, dict)]
    return {"computable": bool(obj["computable"]), "reason": str(obj.get("reason", "")).strip(), "results": results}


__all__ = ["Check", "PaperInput", "authority", "judge_computability", "load_input", "paper_date",
           "recency"]  # fmt: skip
