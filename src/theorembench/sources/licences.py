"""Which paper licences let theorembench ship a paper's own text with a benchmark item.

arXiv records one licence per paper (its OAI-PMH ``arXiv`` records carry it as a URL). An export
quotes a paper (its theorem, context, proof sketch) only where that licence lets anyone
redistribute the text:

- every Creative Commons licence does, for verbatim copies: BY, BY-SA, BY-NC, BY-NC-SA, BY-ND and
  BY-NC-ND (the NC and ND terms restrict commercial use and adaptations, which the dataset card
  names; a verbatim quotation with attribution is allowed under all of them);
- CC0 and the public-domain mark do;
- arXiv's own non-exclusive distribution licence does not: it grants arXiv alone the right to
  distribute the paper, so others may not, and neither may an unknown or missing licence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ARXIV_NONEXCLUSIVE = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"


@dataclass(frozen=True)
class LicenceInfo:
    url: str | None
    name: str  # a short name: "CC BY 4.0", "arXiv non-exclusive", "unknown"
    redistributable: bool


def _normal(url: str) -> str:
    text = url.strip().lower()
    text = re.sub(r"^https?://", "", text)
    text = re.sub(r"^www\.", "", text)
    return text.rstrip("/")


def licence_info(url: str | None) -> LicenceInfo:
    """The licence at ``url`` (as arXiv records it), its short name and whether its text may ship."""
    if not url or not url.strip():
        return LicenceInfo(None, "unknown", False)
    text = _normal(url)
    cc = re.fullmatch(r"creativecommons\.org/licenses/((?:by|nc|sa|nd)(?:-(?:by|nc|sa|nd))*)/(\d\.\d)(?:/.*)?", text)
    if cc:
        return LicenceInfo(url, f"CC {cc.group(1).upper()} {cc.group(2)}", True)
    zero = re.fullmatch(r"creativecommons\.org/publicdomain/(zero|mark)/(\d\.\d)(?:/.*)?", text)
    if zero:
        return LicenceInfo(url, "CC0 " + zero.group(2) if zero.group(1) == "zero" else "Public Domain Mark", True)
    if re.fullmatch(r"arxiv\.org/licenses/nonexclusive-distrib/\d\.\d", text):
        return LicenceInfo(url, "arXiv non-exclusive", False)
    return LicenceInfo(url, "unknown", False)


__all__ = ["ARXIV_NONEXCLUSIVE", "LicenceInfo", "licence_info"]
