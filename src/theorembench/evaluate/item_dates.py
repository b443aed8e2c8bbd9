"""When an item's mathematics was first public: the first version of its source paper, for the contamination guard.

An item's date is a span, from the earliest to the latest day it may be: one day when a source gives the
day, a whole month when only the month is known (a new-style arXiv id ``YYMM.NNNNN`` says the paper was
first submitted in that month). The sources, best first:

1. the store's paper row: ``meta.created`` (arXiv's first-version date) or ``published``;
2. the release manifest, when the item file sits in a release folder: the row's ``papers[].first_version``;
3. the arXiv id itself: the month it names.

An item made from several papers (a Proof2Hybrid question) is as new as its newest paper; an item with
no source paper found (a Stacks Project seed, a hand-written file) has no date: ``unknown``.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from theorembench.store import Store
from theorembench.store.papers import PaperRepo

_ARXIV = re.compile(r"^(?:arxiv:)?(\d{2})(\d{2})\.\d{4,5}", re.IGNORECASE)
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class ItemDate:
    """The span of days an item's source was first public in (both None: unknown), and where that came from."""

    earliest: date | None
    latest: date | None
    source: str

    @property
    def known(self) -> bool:
        return self.earliest is not None and self.latest is not None

    def to_dict(self) -> dict[str, Any]:
        if not self.known:
            return {"date": None, "source": self.source}
        assert self.earliest is not None and self.latest is not None
        text = self.earliest.isoformat() if self.earliest == self.latest else self.earliest.isoformat()[:7]
        return {"date": text, "source": self.source}


UNKNOWN = ItemDate(None, None, "no source paper with a date")


def on_day(day: date, source: str) -> ItemDate:
    return ItemDate(day, day, source)


def from_timestamp(seconds: float, source: str) -> ItemDate:
    """A store timestamp (seconds since the epoch, UTC) as its day."""
    return on_day(datetime.fromtimestamp(seconds, UTC).date(), source)


def arxiv_month(ref: str) -> ItemDate | None:
    """``2405.01234v2`` -> May 2024 (first submitted in that month); None for anything else."""
    m = _ARXIV.match(ref.strip())
    if not m or not 1 <= int(m[2]) <= 12:
        return None
    year, month = 2000 + int(m[1]), int(m[2])
    return ItemDate(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]), "arxiv id")


def _day(text: Any) -> date | None:
    m = _DAY.match(str(text or ""))
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def _bare(ref: str) -> str:
    """An arXiv reference without its version and item suffix: ``2511.04651v1::alt1`` -> ``2511.04651``."""
    head = ref.split("::", 1)[0]
    return re.sub(r"v\d+$", "", head)


def paper_date(store: Store | None, ref: str, manifest_papers: Sequence[Mapping[str, Any]] = ()) -> ItemDate | None:
    """The first version of one paper: from the store, else the release manifest's rows, else its arXiv id."""
    if store is not None:
        repo = PaperRepo(store)
        paper = repo.find(ref) or repo.find(_bare(ref))
        if paper is not None:
            day = _day((paper.get("meta") or {}).get("created")) or _day(paper.get("published"))
            if day is not None:
                return on_day(day, "store")
    for row in manifest_papers:
        named = ref in (row.get("paper_id"), row.get("arxiv_id")) or _bare(ref) == row.get("arxiv_id")
        if named and (day := _day(row.get("first_version"))) is not None:
            return on_day(day, "release manifest")
    return arxiv_month(ref)


def newest(dates: Iterable[ItemDate | None]) -> ItemDate:
    """An item made from several papers is as new as its newest one; unknown when none has a date."""
    found = [d for d in dates if d is not None and d.known]
    if not found:
        return UNKNOWN
    return max(found, key=lambda d: (d.latest, d.earliest))


def item_date(store: Store | None, refs: Sequence[str], manifest_row: Mapping[str, Any] | None = None) -> ItemDate:
    """An item's date from the papers it names (``refs``), with the release manifest's row when there is one."""
    papers = list((manifest_row or {}).get("papers") or [])
    found = newest(paper_date(store, ref, papers) for ref in refs if ref)
    if found.known:
        return found
    if manifest_row is not None and (day := _day(manifest_row.get("first_version"))) is not None:
        return on_day(day, "release manifest")
    return found


__all__ = ["UNKNOWN", "ItemDate", "arxiv_month", "from_timestamp", "item_date", "newest", "on_day", "paper_date"]
