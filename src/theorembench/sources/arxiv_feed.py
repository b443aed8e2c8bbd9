"""arXiv paper metadata: identifiers, month-window queries and the export API's Atom feed.

* :class:`PaperMeta` is one paper (one version) as the export API describes it.
* :func:`split_id` reads an arXiv identifier (new or old style, ``arxiv:`` or an
  abs URL) into id and version.
* :func:`parse_month`, :func:`month_windows` and :func:`month_query` build the
  ``search_query`` of a month search (day windows of doubling length).
* :func:`parse_feed` turns one Atom answer into :class:`PaperMeta` records (via
  :func:`paper_from_result` on the ``arxiv`` package's results), raising
  :class:`~.arxiv_errors.ArxivQueryError` on an API error feed;
  :func:`api_error_message` and :func:`entry_licenses` read what the ``arxiv``
  package does not (the error entry, a per-entry license).
"""

from __future__ import annotations

import calendar
import re
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

import arxiv
from arxiv import _feed as arxiv_feed

from theorembench.sources.arxiv_errors import ArxivError, ArxivQueryError

ARXIV_API_BASE = "https://export.arxiv.org"
"""Where the export API lives (``/api/query``)."""
ARXIV_BASE = "https://arxiv.org"
"""Where e-prints are downloaded from (``/e-print/<id>``) and canonical links point."""

_NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
}

_NEW_ID = r"\d{4}\.\d{4,5}"
_OLD_ID = r"[a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?/\d{7}"
_ID_RE = re.compile(rf"^(?P<id>{_NEW_ID}|{_OLD_ID})(?:v(?P<version>\d+))?$")
_LOOSE_ID_RE = re.compile(r"^(?P<id>.+?)(?:v(?P<version>\d+))?$")
_MONTH_RE = re.compile(r"^(\d{4})-(\d{2})$")
_ASCII_WS = re.compile(r"[ \t\r\n\f\v]+")


@dataclass
class PaperMeta:
    """One arXiv paper (one version) as the export API describes it."""

    arxiv_id: str
    version: int
    title: str
    authors: list[str]
    abstract: str
    primary_category: str
    categories: list[str]
    published: str
    updated: str
    abs_url: str
    pdf_url: str
    eprint_url: str
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None
    license: str | None = None

    @property
    def versioned_id(self) -> str:
        return f"{self.arxiv_id}v{self.version}"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict (lists copied)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PaperMeta:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["authors"] = list(values.get("authors") or [])
        values["categories"] = list(values.get("categories") or [])
        return cls(**values)


# --------------------------------------------------------------------------- text and ids


def clean_text(text: str | None) -> str:
    """Collapse ASCII whitespace only: mojibake may contain U+0085/U+00A0 that must survive."""
    return _ASCII_WS.sub(" ", text or "").strip()


def _optional(text: str | None) -> str | None:
    cleaned = clean_text(text)
    return cleaned or None


def _iso(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def split_id(raw: str) -> tuple[str, int | None]:
    """``"2403.16981v2"`` -> ``("2403.16981", 2)``; also accepts ``arxiv:`` and abs URLs."""
    text = raw.strip()
    text = re.sub(r"^(?:https?://(?:export\.)?arxiv\.org/(?:abs|pdf|e-print)/|arxiv:)", "", text, flags=re.I)
    m = _ID_RE.match(text)
    if not m:
        raise ValueError(
            f"not an arXiv identifier: {raw!r} (expected e.g. '2503.20170', '2503.20170v1' or 'math/0601001')"
        )
    version = m.group("version")
    return m.group("id"), int(version) if version else None


# --------------------------------------------------------------------------- feed parsing


def api_error_message(body: bytes) -> str | None:
    """The message of an arXiv API error feed (an entry whose id is ``.../api/errors#...``)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    for entry in root.iterfind("atom:entry", _NS):
        entry_id = entry.findtext("atom:id", default="", namespaces=_NS)
        title = entry.findtext("atom:title", default="", namespaces=_NS).strip()
        if "/api/errors" in entry_id or (title == "Error" and entry.find("atom:published", _NS) is None):
            summary = clean_text(entry.findtext("atom:summary", default="", namespaces=_NS))
            return summary or entry_id.rpartition("#")[2].replace("_", " ") or "unspecified API error"
    return None


def entry_licenses(body: bytes) -> dict[str, str]:
    """License per entry id, where the feed states one (the Atom API normally does not)."""
    out: dict[str, str] = {}
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return out
    for entry in root.iterfind("atom:entry", _NS):
        entry_id = (entry.findtext("atom:id", default="", namespaces=_NS) or "").strip()
        value = entry.findtext("arxiv:license", default="", namespaces=_NS).strip()
        if not value:
            link = entry.find("atom:link[@rel='license']", _NS)
            value = (link.get("href") or "").strip() if link is not None else ""
        if not value:
            value = clean_text(entry.findtext("atom:rights", default="", namespaces=_NS))
        if entry_id and value:
            out[entry_id] = value
    return out


def paper_from_result(result: arxiv.Result, license: str | None = None) -> PaperMeta:
    """Convert an ``arxiv.Result`` into a :class:`PaperMeta`."""
    short = result.get_short_id().strip()
    m = _ID_RE.match(short) or _LOOSE_ID_RE.match(short)
    assert m is not None  # the loose pattern matches any non-empty string
    arxiv_id = m.group("id")
    version = int(m.group("version")) if m.group("version") else 1
    vid = f"{arxiv_id}v{version}"

    categories: list[str] = []
    for term in [result.primary_category, *result.categories]:
        term = (term or "").strip()
        if term and term not in categories:
            categories.append(term)
    primary = (result.primary_category or "").strip() or (categories[0] if categories else "")

    abs_url = next((link.href for link in result.links if link.rel == "alternate"), None)
    pdf_url = result.pdf_url or next(
        (link.href for link in result.links if link.content_type == "application/pdf"), None
    )
    return PaperMeta(
        arxiv_id=arxiv_id,
        version=version,
        title=clean_text(result.title),
        authors=[clean_text(a.name) for a in result.authors if clean_text(a.name)],
        abstract=clean_text(result.summary),
        primary_category=primary,
        categories=categories,
        published=_iso(result.published),
        updated=_iso(result.updated),
        abs_url=abs_url or f"{ARXIV_BASE}/abs/{vid}",
        pdf_url=pdf_url or f"{ARXIV_BASE}/pdf/{vid}",
        eprint_url=f"{ARXIV_BASE}/e-print/{vid}",
        doi=_optional(result.doi),
        journal_ref=_optional(result.journal_ref),
        comment=_optional(result.comment),
        license=_optional(license),
    )


def parse_feed(body: bytes) -> list[PaperMeta]:
    """Parse one Atom response of the export API (raises :class:`ArxivQueryError` on an error feed)."""
    message = api_error_message(body)
    if message is not None:
        raise ArxivQueryError(f"arXiv API error: {message}")
    feed = arxiv_feed.parse(body)
    if feed.malformed:
        raise ArxivError(f"arXiv returned a malformed feed: {feed.error}")
    licenses = entry_licenses(body)
    return [paper_from_result(r, licenses.get(r.entry_id)) for r in feed.results]


# --------------------------------------------------------------------------- month windows


def parse_month(month: str) -> tuple[int, int]:
    """``"2025-03"`` -> ``(2025, 3)``; ValueError with a clear message otherwise."""
    m = _MONTH_RE.match(month.strip()) if isinstance(month, str) else None
    if not m or not 1 <= int(m.group(2)) <= 12 or int(m.group(1)) < 1991:
        raise ValueError(f"month must be 'YYYY-MM' (e.g. '2025-03', year 1991 or later), got {month!r}")
    return int(m.group(1)), int(m.group(2))


def month_windows(year: int, month: int) -> list[tuple[int, int]]:
    """Consecutive day ranges covering the month, each twice as long as the one before:
    (1, 1), (2, 3), (4, 7), (8, 15), (16, last day)."""
    last = calendar.monthrange(year, month)[1]
    windows, start, span = [], 1, 1
    while start <= last:
        end = min(start + span - 1, last)
        windows.append((start, end))
        start, span = end + 1, span * 2
    return windows


def month_query(category: str, year: int, month: int, first_day: int, last_day: int) -> str:
    return (
        f"cat:{category} AND submittedDate:"
        f"[{year:04d}{month:02d}{first_day:02d}0000 TO {year:04d}{month:02d}{last_day:02d}2359]"
    )


__all__ = [
    "ARXIV_API_BASE",
    "ARXIV_BASE",
    "PaperMeta",
    "api_error_message",
    "clean_text",
    "entry_licenses",
    "month_query",
    "month_windows",
    "paper_from_result",
    "parse_feed",
    "parse_month",
    "split_id",
]
