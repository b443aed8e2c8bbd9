"""arXiv's OAI-PMH interface: each paper's licence and first-version date (``metadataPrefix=arXiv``).

The export API's Atom feed (:mod:`.arxiv_feed`) does not say under which licence a paper was posted;
arXiv's OAI-PMH records in its own ``arXiv`` format do (``<license>``, a URL, absent when the
submitter chose none). :class:`ArxivOai` asks for them:

* :meth:`ArxivOai.get_record` / :meth:`ArxivOai.get_records`: one ``GetRecord`` per paper (identifier
  ``oai:arXiv.org:<id>``, no version: OAI-PMH describes the latest version only). This is the robust
  way to ask about a known list of papers: OAI datestamps are the last modification of a record, not the
  submission date, so no ``from``/``until`` window selects "the papers of a month".
* :meth:`ArxivOai.list_records`: ``ListRecords`` over a set and datestamp window, following
  ``resumptionToken`` until an empty one (for harvesting, not used by the pipeline).

Every request goes through the same polite transport as the export API (:func:`.arxiv_http.request`:
the process-wide limiter, bounded retries with exponential spacing, 503 with ``Retry-After``, and the
:mod:`.arxiv_errors` types once retries run out). OAI-PMH answers its own errors with HTTP 200 and an
``<error code=...>`` element: ``idDoesNotExist`` means no record (``None``), ``noRecordsMatch`` an empty
list, and any other code raises :class:`~.arxiv_errors.ArxivQueryError`.

``created`` in the ``arXiv`` format is documented as the date of version 1 (``updated``: the latest
version); arXiv's current OAI service fills it from the current version's metadata row, which may be
a later version's date, so a caller that also has the Atom ``published`` date (always version 1) should
keep the earlier of the two (:func:`first_version_date`).
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Self
from urllib.parse import urlencode

import requests

from theorembench.sources.arxiv_errors import ArxivError, ArxivQueryError
from theorembench.sources.arxiv_feed import clean_text, split_id
from theorembench.sources.arxiv_http import LIMITER, USER_AGENT, RateLimiter, read_feed_body, request

OAI_BASE = "https://oaipmh.arxiv.org/oai"
"""arXiv's OAI-PMH endpoint (the ``baseURL`` of its Identify answer)."""
OAI_ID_PREFIX = "oai:arXiv.org:"

NS = {"oai": "http://www.openarchives.org/OAI/2.0/", "arXiv": "http://arxiv.org/OAI/arXiv/"}

NO_RECORD = "idDoesNotExist"
NO_MATCH = "noRecordsMatch"


@dataclass
class OaiRecord:
    """One paper as arXiv's OAI-PMH ``arXiv`` format describes it (its latest version)."""

    arxiv_id: str
    created: str | None  # YYYY-MM-DD: version 1 as documented (see the module docstring)
    updated: str | None  # YYYY-MM-DD of the latest version, absent for a paper with one version
    license: str | None
    title: str
    categories: list[str]
    authors: list[str]
    doi: str | None = None
    datestamp: str | None = None
    sets: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class OaiPage:
    """One OAI-PMH answer: its records, the resumption token (``None``: last page) and any OAI error."""

    records: list[OaiRecord]
    token: str | None = None
    error_code: str | None = None
    error_message: str = ""


def _text(node: ET.Element | None, path: str) -> str | None:
    if node is None:
        return None
    value = clean_text(node.findtext(path, default="", namespaces=NS))
    return value or None


def _author(node: ET.Element) -> str:
    parts = [_text(node, "arXiv:forenames"), _text(node, "arXiv:keyname"), _text(node, "arXiv:suffix")]
    return " ".join(p for p in parts if p)


def _record(node: ET.Element) -> OaiRecord | None:
    header = node.find("oai:header", NS)
    meta = node.find("oai:metadata/arXiv:arXiv", NS)
    if header is None or header.get("status") == "deleted" or meta is None:
        return None  # a deleted record carries no metadata
    arxiv_id = _text(meta, "arXiv:id")
    if not arxiv_id:
        return None
    return OaiRecord(
        arxiv_id=arxiv_id,
        created=_text(meta, "arXiv:created"),
        updated=_text(meta, "arXiv:updated"),
        license=_text(meta, "arXiv:license"),
        title=_text(meta, "arXiv:title") or "",
        categories=(_text(meta, "arXiv:categories") or "").split(),
        authors=[a for a in (_author(n) for n in meta.iterfind("arXiv:authors/arXiv:author", NS)) if a],
        doi=_text(meta, "arXiv:doi"),
        datestamp=_text(header, "oai:datestamp"),
        sets=[clean_text(s.text) for s in header.iterfind("oai:setSpec", NS) if clean_text(s.text)],
    )


def parse_oai(body: bytes) -> OaiPage:
    """Parse one OAI-PMH answer (``GetRecord`` or ``ListRecords``); raises :class:`ArxivError` if it is not one."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ArxivError(f"arXiv OAI-PMH sent something that is not XML: {exc}") from None
    if root.tag != f"{{{NS['oai']}}}OAI-PMH":
        raise ArxivError(f"arXiv OAI-PMH sent an answer that is not OAI-PMH (root element {root.tag!r})")
    error = root.find("oai:error", NS)
    if error is not None:
        return OaiPage([], None, error.get("code") or "unknown", clean_text(error.text))
    nodes = root.findall("oai:GetRecord/oai:record", NS) + root.findall("oai:ListRecords/oai:record", NS)
    records = [r for r in (_record(n) for n in nodes) if r is not None]
    token = clean_text(root.findtext("oai:ListRecords/oai:resumptionToken", default="", namespaces=NS)) or None
    return OaiPage(records, token)


def first_version_date(oai_created: str | None, published: str | None) -> str | None:
    """The date (YYYY-MM-DD) of a paper's first version: the earlier of OAI's ``created`` and the Atom
    ``published`` date, either of which may be missing (see the module docstring for why both)."""
    dates = [d[:10] for d in (oai_created, published) if d and len(d) >= 10]
    return min(dates) if dates else None


class ArxivOai:
    """Polite OAI-PMH client. ``base_url`` is a mirror's root (its endpoint is ``{base}/oai``, beside the
    export API's ``{base}/api/query``); by default the real endpoint :data:`OAI_BASE`."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        delay_s: float = 3.0,
        max_retries: int = 3,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        timeout_s: float = 60.0,
        limiter: RateLimiter | None = None,
    ) -> None:
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, got {delay_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.oai_url = f"{base_url.rstrip('/')}/oai" if base_url else OAI_BASE
        self.delay_s, self.max_retries = float(delay_s), int(max_retries)
        self.clock, self.sleep, self.timeout_s = clock, sleep, timeout_s
        self.limiter = limiter if limiter is not None else LIMITER
        self._session = requests.Session()
        self._session.headers["User-Agent"] = USER_AGENT

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ask(self, params: dict[str, str]) -> OaiPage:
        url = f"{self.oai_url}?{urlencode(params)}"
        body = request(self._session, url, read_feed_body, what="OAI-PMH request", limiter=self.limiter,
                       delay_s=self.delay_s, max_retries=self.max_retries, clock=self.clock, sleep=self.sleep,
                       timeout_s=self.timeout_s)  # fmt: skip
        page = parse_oai(body)
        if page.error_code not in (None, NO_RECORD, NO_MATCH):
            raise ArxivQueryError(f"arXiv OAI-PMH refused the request ({page.error_code}): {page.error_message}",
                                  url=url)  # fmt: skip
        return page

    def get_record(self, arxiv_id: str) -> OaiRecord | None:
        """The record of ``arxiv_id`` (a version suffix is dropped), or ``None`` if OAI-PMH has none."""
        base_id, _version = split_id(arxiv_id)
        page = self._ask({"verb": "GetRecord", "identifier": OAI_ID_PREFIX + base_id, "metadataPrefix": "arXiv"})
        return page.records[0] if page.records else None

    def get_records(self, ids: list[str], on_record: Callable[[str, OaiRecord | None], None] | None = None,
                    ) -> dict[str, OaiRecord]:  # fmt: skip
        """Records by unversioned id, for those OAI-PMH has; ``on_record(id, record or None)`` after each ask.
        A transport failure raises after its retries; what was found before stays reported through ``on_record``."""
        found: dict[str, OaiRecord] = {}
        for raw in dict.fromkeys(split_id(i)[0] for i in ids):
            record = self.get_record(raw)
            if record is not None:
                found[raw] = record
            if on_record is not None:
                on_record(raw, record)
        return found

    def list_records(self, *, set_spec: str | None = None, from_date: str | None = None,
                     until: str | None = None) -> Iterator[OaiRecord]:  # fmt: skip
        """Every record of a set and datestamp window (``YYYY-MM-DD``), page after page."""
        params = {"verb": "ListRecords", "metadataPrefix": "arXiv"}
        params.update({k: v for k, v in (("set", set_spec), ("from", from_date), ("until", until)) if v})
        while True:
            page = self._ask(params)
            yield from page.records
            if not page.token:
                return
            params = {"verb": "ListRecords", "resumptionToken": page.token}


__all__ = ["NS", "OAI_BASE", "OAI_ID_PREFIX", "ArxivOai", "OaiPage", "OaiRecord", "first_version_date", "parse_oai"]
