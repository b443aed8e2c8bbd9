"""Stage 1 retrieval from arXiv: paper metadata from the export API and LaTeX e-prints.

Pure Python, no database: the functions here return typed records
(:class:`PaperMeta`, :class:`EprintFile`) that the store and the CLI persist.

* Queries are built and paged by the ``arxiv`` package (v4): :class:`arxiv.Search`
  makes the query parameters and :class:`arxiv.Client` walks the pages. Its
  transport is replaced (``Client._parse_feed`` is overridden) so that every
  request goes through this module's limiter, retry policy and error mapping,
  and ``Client.query_url_format`` points the query at ``{base_url}/api/query``.
* arXiv asks for at most one request every few seconds over a single connection.
  :data:`LIMITER` is one process-wide lock plus the time of the last request; it
  is held for the whole request (queries *and* e-print downloads), so requests
  never overlap and are spaced by ``delay_s``. Retries widen the spacing
  exponentially (``delay_s * 2**attempt``, or ``Retry-After`` when larger).
* E-prints are cached in ``cache_dir`` under ``<id>[v<N>]<ext>``; the extension
  comes from :func:`detect_kind`, which looks only at the first bytes.
"""

from __future__ import annotations

import calendar
import hashlib
import logging
import os
import re
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
import zlib
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import arxiv
import requests
import urllib3
from arxiv import _feed as arxiv_feed

from theorembench import __version__
from theorembench.common.errors import ServiceError

log = logging.getLogger(__name__)

ARXIV_API_BASE = "https://export.arxiv.org"
"""Where the export API lives (``/api/query``)."""
ARXIV_BASE = "https://arxiv.org"
"""Where e-prints are downloaded from (``/e-print/<id>``) and canonical links point."""

USER_AGENT = f"theorembench/{__version__} (arXiv stage-1 retrieval; python-requests)"
HEAD_BYTES = 64 * 1024
"""How many leading bytes of a file :func:`detect_kind` is given."""
MAX_RETRY_AFTER_S = 300.0
"""Cap on a server's ``Retry-After`` (a misconfigured value must not stall a run for hours)."""

_NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
}

_NEW_ID = r"\d{4}\.\d{4,5}"
_OLD_ID = r"[a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?/\d{7}"
_ID_RE = re.compile(rf"^(?P<id>{_NEW_ID}|{_OLD_ID})(?:v(?P<version>\d+))?$")
_LOOSE_ID_RE = re.compile(r"^(?P<id>.+?)(?:v(?P<version>\d+))?$")
_MONTH_RE = re.compile(r"^(\d{4})-(\d{2})$")
_CATEGORY_RE = re.compile(r"^[A-Za-z][A-Za-z-]*(?:\.[A-Za-z*-]+|\*)?$")
_ASCII_WS = re.compile(r"[ \t\r\n\f\v]+")

KINDS = ("tar.gz", "gz", "pdf", "tar", "tex", "unknown")
_EXTENSIONS = {
    "tar.gz": ".tar.gz",
    "gz": ".gz",
    "pdf": ".pdf",
    "tar": ".tar",
    "tex": ".tex",
    "unknown": ".bin",
}
_THROTTLE_STATUSES = (429, 503)


# --------------------------------------------------------------------------- errors


class ArxivError(ServiceError, RuntimeError):
    """Base class of everything this module raises about arXiv itself."""


class ArxivQueryError(ArxivError):
    """The API rejected the query (HTTP 400 with an Atom ``Error`` entry)."""

    def __init__(self, message: str, *, url: str = "") -> None:
        super().__init__(message)
        self.api_message = message
        self.url = url


class ArxivThrottled(ArxivError):
    """arXiv kept answering 429/503 after every retry."""

    def __init__(self, message: str, *, status: int, retries: int, url: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.retries = retries
        self.url = url


class ArxivUnavailable(ArxivError):
    """Server errors (5xx other than 503) or connection failures outlasted the retries."""


class ArxivNotFound(ArxivError):
    """HTTP 404: no such paper or e-print."""


# --------------------------------------------------------------------------- records


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


@dataclass(frozen=True)
class EprintFile:
    """A downloaded e-print in the cache; ``kind`` is one of :data:`KINDS`."""

    path: Path
    kind: str
    size: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "kind": self.kind, "size": self.size, "sha256": self.sha256}


# --------------------------------------------------------------------------- e-print kinds


def _looks_like_tar(block: bytes) -> bool:
    """A tar header: POSIX/GNU magic at 257, or (old V7 tars) a valid header checksum."""
    if len(block) < 512:
        return len(block) >= 262 and block[257:262] == b"ustar"
    if block[257:262] == b"ustar":
        return True
    if not block[:100].strip(b"\0"):
        return False
    stored = block[148:156].replace(b"\0", b" ").strip()
    if not stored or any(c not in b"01234567" for c in stored):
        return False
    computed = sum(block[:148]) + 8 * 0x20 + sum(block[156:512])
    return int(stored, 8) == computed


def _looks_like_latex(head: bytes) -> bool:
    if b"\0" in head[:4096]:
        return False
    text = head[:4096].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text or text.startswith("%!"):  # PostScript, not TeX
        return False
    if text[0] in "\\%":
        return True
    return any(m in text for m in ("\\documentclass", "\\documentstyle", "\\begin{document}"))


def detect_kind(head: bytes) -> str:
    """Classify an e-print from its first bytes (give at least a few KiB; :data:`HEAD_BYTES`).

    ``"tar.gz"`` gzip whose decompressed start is a tar header; ``"gz"`` any
    other gzip (arXiv's form for a single gzipped .tex); ``"pdf"`` a PDF-only
    submission; ``"tar"`` an uncompressed tar; ``"tex"`` plain LaTeX text;
    ``"unknown"`` anything else (HTML error pages, PostScript, empty input).
    """
    head = bytes(head)
    if head[:2] == b"\x1f\x8b":
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 512)
        except zlib.error:
            inner = b""
        return "tar.gz" if _looks_like_tar(inner) else "gz"
    if head.lstrip(b" \t\r\n")[:4] == b"%PDF":
        return "pdf"
    if _looks_like_tar(head[:512]):
        return "tar"
    if _looks_like_latex(head):
        return "tex"
    return "unknown"


# --------------------------------------------------------------------------- rate limiting


class RateLimiter:
    """One lock and the time of the last request, shared by every arXiv call of the process.

    :meth:`slot` holds the lock for the whole request, so there is never more
    than one connection, and first waits until ``gap`` seconds have passed since
    the previous request ended. Time is read from the caller's ``clock`` and
    waited with the caller's ``sleep``; if the recorded time is ahead of the
    clock (another clock recorded it), the full ``gap`` is waited.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.last: float | None = None

    @contextmanager
    def slot(
        self,
        gap: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Iterator[None]:
        with self._lock:
            if self.last is not None and gap > 0:
                elapsed = clock() - self.last
                wait = gap if elapsed < 0 else gap - elapsed
                if wait > 0:
                    sleep(wait)
            try:
                yield
            finally:
                self.last = clock()

    def reset(self) -> None:
        """Forget the last request (tests)."""
        with self._lock:
            self.last = None


LIMITER = RateLimiter()
"""The process-wide limiter every :class:`ArxivSource` uses."""


class _Retry(Exception):
    """Internal: this attempt failed in a way worth retrying."""

    def __init__(self, reason: str, status: int | None = None, retry_after: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


def _retry_after(resp: requests.Response) -> float:
    value = resp.headers.get("Retry-After", "").strip()
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER_S) if value else 0.0
    except ValueError:
        return 0.0  # an HTTP date: fall back to our own backoff


# --------------------------------------------------------------------------- feed parsing


def _clean(text: str | None) -> str:
    """Collapse ASCII whitespace only: mojibake may contain U+0085/U+00A0 that must survive."""
    return _ASCII_WS.sub(" ", text or "").strip()


def _optional(text: str | None) -> str | None:
    cleaned = _clean(text)
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


def _api_error_message(body: bytes) -> str | None:
    """The message of an arXiv API error feed (an entry whose id is ``.../api/errors#...``)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    for entry in root.iterfind("atom:entry", _NS):
        entry_id = entry.findtext("atom:id", default="", namespaces=_NS)
        title = entry.findtext("atom:title", default="", namespaces=_NS).strip()
        if "/api/errors" in entry_id or (title == "Error" and entry.find("atom:published", _NS) is None):
            summary = _clean(entry.findtext("atom:summary", default="", namespaces=_NS))
            return summary or entry_id.rpartition("#")[2].replace("_", " ") or "unspecified API error"
    return None


def _entry_licenses(body: bytes) -> dict[str, str]:
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
            value = _clean(entry.findtext("atom:rights", default="", namespaces=_NS))
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
        title=_clean(result.title),
        authors=[_clean(a.name) for a in result.authors if _clean(a.name)],
        abstract=_clean(result.summary),
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
    message = _api_error_message(body)
    if message is not None:
        raise ArxivQueryError(f"arXiv API error: {message}")
    feed = arxiv_feed.parse(body)
    if feed.malformed:
        raise ArxivError(f"arXiv returned a malformed feed: {feed.error}")
    licenses = _entry_licenses(body)
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


# --------------------------------------------------------------------------- the source


class _RoutedClient(arxiv.Client):
    """``arxiv.Client`` whose page fetches go through an :class:`ArxivSource`.

    v4's Client builds each page URL with ``query_url_format.format(urlencode(...))``
    and fetches/parses it in ``_parse_feed(url, first_page, _try_index)``; we keep
    the former (pointed at the source's base URL) and replace the latter.
    """

    def __init__(self, source: ArxivSource, page_size: int) -> None:
        super().__init__(page_size=page_size, delay_seconds=0.0, num_retries=0)
        escaped = source.api_url.replace("{", "{{").replace("}", "}}")
        self.query_url_format = escaped + "?{}"
        self._source = source
        self.licenses: dict[str, str] = {}

    def _parse_feed(self, url: str, first_page: bool = True, _try_index: int = 0) -> arxiv_feed.ParsedFeed:
        return self._source._fetch_feed(url, first_page=first_page, licenses=self.licenses)


@dataclass
class _Failure:
    reason: str
    status: int | None = None
    history: list[str] = field(default_factory=list)


class ArxivSource:
    """Polite arXiv client: metadata search, id look-up and cached e-print downloads.

    ``base_url`` (e.g. ``http://127.0.0.1:8080``) sends both the API query
    (``{base}/api/query``) and the e-print downloads (``{base}/e-print/<id>``) to a
    mirror; by default they go to export.arxiv.org and arxiv.org.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        cache_dir: Path | str,
        delay_s: float = 3.0,
        max_retries: int = 3,
        page_size: int = 100,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        timeout_s: float = 60.0,
        limiter: RateLimiter | None = None,
    ) -> None:
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, got {delay_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if not 1 <= page_size <= 2000:
            raise ValueError(f"page_size must be between 1 and 2000 (the API's limit), got {page_size}")
        base = base_url.rstrip("/") if base_url else None
        self.base_url = base
        self.api_url = f"{base or ARXIV_API_BASE}/api/query"
        self.eprint_base = f"{base or ARXIV_BASE}/e-print"
        self.cache_dir = Path(cache_dir)
        self.delay_s = float(delay_s)
        self.max_retries = int(max_retries)
        self.page_size = int(page_size)
        self.clock = clock
        self.sleep = sleep
        self.timeout_s = timeout_s
        self.limiter = limiter if limiter is not None else LIMITER
        self._session = requests.Session()
        self._session.headers["User-Agent"] = USER_AGENT

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> ArxivSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- transport

    def _request(self, url: str, consume: Callable[[requests.Response], Any], *, what: str) -> Any:
        """GET ``url`` under the limiter with bounded, exponentially spaced retries.

        ``consume(response)`` runs while the limiter is held (so a streamed
        download is still the only connection); it may raise :class:`_Retry`.
        """
        failure = _Failure("")
        retry_after = 0.0
        for attempt in range(self.max_retries + 1):
            gap = max(self.delay_s * (2**attempt), retry_after)
            try:
                with self.limiter.slot(gap, self.clock, self.sleep):
                    try:
                        resp = self._session.get(
                            url, timeout=self.timeout_s, stream=True, headers={"Accept-Encoding": "identity"}
                        )
                    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
                        raise _Retry(f"connection error: {exc}") from exc
                    with resp:
                        status = resp.status_code
                        if status in _THROTTLE_STATUSES or status >= 500:
                            raise _Retry(f"HTTP {status}", status, _retry_after(resp))
                        if status >= 400:
                            self._raise_for_client_error(url, resp, what)
                        try:
                            return consume(resp)
                        except (
                            requests.exceptions.ConnectionError,
                            requests.exceptions.Timeout,
                            requests.exceptions.ChunkedEncodingError,
                            urllib3.exceptions.HTTPError,
                        ) as exc:
                            raise _Retry(f"connection error while reading: {exc}") from exc
            except _Retry as exc:
                failure.reason, failure.status = exc.reason, exc.status
                failure.history.append(exc.reason)
                retry_after = exc.retry_after
                level = logging.INFO if attempt < self.max_retries else logging.WARNING
                log.log(level, "arXiv %s %s: %s (attempt %d of %d)", what, url, exc.reason, attempt + 1,
                        self.max_retries + 1)
        self._give_up(url, failure, what)

    def _raise_for_client_error(self, url: str, resp: requests.Response, what: str) -> None:
        status = resp.status_code
        body = resp.content
        if status == 400:
            message = _api_error_message(body) or _clean(body[:300].decode("utf-8", "replace")) or "bad request"
            raise ArxivQueryError(f"arXiv API rejected the {what} (HTTP 400): {message}", url=url)
        if status == 404:
            raise ArxivNotFound(f"arXiv has no such {what} (HTTP 404): {url}")
        snippet = _clean(body[:200].decode("utf-8", "replace"))
        raise ArxivError(f"arXiv refused the {what} with HTTP {status}: {url}" + (f" ({snippet})" if snippet else ""))

    def _give_up(self, url: str, failure: _Failure, what: str) -> None:
        attempts = self.max_retries + 1
        if failure.status in _THROTTLE_STATUSES:
            raise ArxivThrottled(
                f"arXiv is throttling us: HTTP {failure.status} for the {what} {url} on all {attempts} attempts "
                f"({self.max_retries} retries with exponential backoff from {self.delay_s:g}s). "
                "Retry later (arXiv asks for one request every 3 seconds), or use --base-url to point at a mirror.",
                status=failure.status or 0,
                retries=self.max_retries,
                url=url,
            )
        raise ArxivUnavailable(
            f"arXiv {what} failed after {attempts} attempts ({self.max_retries} retries): {failure.reason}. "
            f"URL: {url}. Retry later or use --base-url to point at a mirror."
        )

    # ----------------------------------------------------------------- queries

    def _read_feed(self, resp: requests.Response) -> bytes:
        body = resp.content
        stripped = body.lstrip()
        if not stripped.startswith(b"<") and b"rate exceeded" in stripped[:200].lower():
            # arXiv's throttle can come as a bare text body instead of a status code.
            raise _Retry("rate exceeded (plain-text answer)", 429, _retry_after(resp))
        return body

    def _fetch_feed(self, url: str, *, first_page: bool, licenses: dict[str, str]) -> arxiv_feed.ParsedFeed:
        """Fetch and parse one page; an empty later page is re-asked (arXiv's known flake)
        up to ``max_retries`` times and then taken as the end of the results."""
        for empty_tries in range(self.max_retries + 1):
            body = self._request(url, self._read_feed, what="query")
            message = _api_error_message(body)
            if message is not None:
                raise ArxivQueryError(f"arXiv API rejected the query: {message}", url=url)
            feed = arxiv_feed.parse(body)
            if feed.malformed:
                raise ArxivError(f"arXiv returned a malformed feed for {url}: {feed.error}")
            licenses.update(_entry_licenses(body))
            if feed.results or first_page:
                return feed
            log.info("empty page from arXiv (try %d): %s", empty_tries + 1, url)
        log.warning("arXiv kept returning an empty page; taking it as the end of results: %s", url)
        return feed

    def _run(self, search: arxiv.Search, page_size: int) -> Iterator[PaperMeta]:
        client = _RoutedClient(self, page_size=max(1, min(page_size, self.page_size)))
        for result in client.results(search):
            yield paper_from_result(result, client.licenses.get(result.entry_id))

    def search_month(
        self,
        month: str,
        category: str = "math.*",
        max_results: int = 100,
        progress: Callable[[int], None] | None = None,
    ) -> list[PaperMeta]:
        """Papers first submitted in ``month`` ("YYYY-MM", GMT) in ``category``, oldest first.

        Searches consecutive day windows of doubling length from the first of the
        month (see :func:`month_windows`) until ``max_results`` distinct papers
        are collected or the month is exhausted. ``progress(n)`` is called with
        the running count after each new paper.
        """
        year, mon = parse_month(month)
        if not isinstance(category, str) or not _CATEGORY_RE.match(category.strip()):
            raise ValueError(f"category must look like 'math.*', 'math.CO' or 'cs', got {category!r}")
        if max_results < 0:
            raise ValueError(f"max_results must be >= 0, got {max_results}")
        collected: dict[str, PaperMeta] = {}
        for first_day, last_day in month_windows(year, mon):
            if len(collected) >= max_results:
                break
            need = max_results - len(collected)
            search = arxiv.Search(
                query=month_query(category.strip(), year, mon, first_day, last_day),
                max_results=need,
                sort_by=arxiv.SortCriterion.SubmittedDate,
                sort_order=arxiv.SortOrder.Ascending,
            )
            for paper in self._run(search, page_size=need):
                if paper.arxiv_id in collected:
                    continue
                collected[paper.arxiv_id] = paper
                if progress is not None:
                    progress(len(collected))
                if len(collected) >= max_results:
                    break
        return list(collected.values())

    def fetch_ids(self, ids: list[str]) -> list[PaperMeta]:
        """Metadata for the given ids (``id_list`` queries, ``page_size`` ids per request).
        A versioned id (``2503.20170v1``) asks for that version. Unknown ids are absent
        from the answer; malformed ones make the API answer 400 (:class:`ArxivQueryError`)."""
        wanted: list[str] = []
        for raw in ids:
            item = raw.strip()
            if item and item not in wanted:
                wanted.append(item)
        out: list[PaperMeta] = []
        for i in range(0, len(wanted), self.page_size):
            chunk = wanted[i : i + self.page_size]
            out.extend(self._run(arxiv.Search(id_list=chunk, max_results=len(chunk)), page_size=len(chunk)))
        return out

    # ----------------------------------------------------------------- e-prints

    def _cache_name(self, arxiv_id: str, version: int | None) -> str:
        return arxiv_id.replace("/", "_") + (f"v{version}" if version else "")

    def cached_eprint(self, arxiv_id: str, version: int | None = None) -> EprintFile | None:
        """The cached e-print for this id/version, if any (no request)."""
        base_id, version = self._resolve(arxiv_id, version)
        name = self._cache_name(base_id, version)
        for ext in _EXTENSIONS.values():
            path = self.cache_dir / (name + ext)
            if path.is_file():
                return describe_file(path)
        return None

    @staticmethod
    def _resolve(arxiv_id: str, version: int | None) -> tuple[str, int | None]:
        base_id, id_version = split_id(arxiv_id)
        if version is not None:
            if isinstance(version, bool) or not isinstance(version, int) or version < 1:
                raise ValueError(f"version must be a positive int, got {version!r}")
            if id_version is not None and id_version != version:
                raise ValueError(f"{arxiv_id!r} names version {id_version} but version={version} was asked")
            id_version = version
        return base_id, id_version

    def download_eprint(self, arxiv_id: str, version: int | None = None) -> EprintFile:
        """Download ``/e-print/<id>[v<version>]`` once into ``cache_dir`` (atomically) and describe it.

        Without a version arXiv serves the latest one; that answer is cached
        under the unversioned name. A PDF-only submission comes back with
        ``kind == "pdf"``.
        """
        base_id, version = self._resolve(arxiv_id, version)
        cached = self.cached_eprint(base_id, version)
        if cached is not None:
            return cached
        name = self._cache_name(base_id, version)
        url = f"{self.eprint_base}/{base_id}" + (f"v{version}" if version else "")
        self.cache_dir.mkdir(parents=True, exist_ok=True)

        def consume(resp: requests.Response) -> tuple[Path, bytes, int, str]:
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=self.cache_dir)
            tmp = Path(tmp_name)
            digest, size, head = hashlib.sha256(), 0, bytearray()
            try:
                with os.fdopen(fd, "wb") as out:
                    for chunk in resp.raw.stream(64 * 1024, decode_content=False):
                        out.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
                        if len(head) < HEAD_BYTES:
                            head += chunk[: HEAD_BYTES - len(head)]
                    out.flush()
                    os.fsync(out.fileno())
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            return tmp, bytes(head), size, digest.hexdigest()

        tmp, head, size, sha = self._request(url, consume, what="e-print")
        if size == 0:
            tmp.unlink(missing_ok=True)
            raise ArxivError(f"arXiv sent an empty e-print for {base_id}: {url}")
        kind = detect_kind(head)
        final = self.cache_dir / (name + _EXTENSIONS[kind])
        os.replace(tmp, final)
        log.info("e-print %s -> %s (%s, %d bytes)", url, final, kind, size)
        return EprintFile(path=final, kind=kind, size=size, sha256=sha)


def describe_file(path: Path) -> EprintFile:
    """Kind, size and SHA-256 of an e-print already on disk."""
    digest, size, head = hashlib.sha256(), 0, b""
    with open(path, "rb") as fh:
        while chunk := fh.read(1024 * 1024):
            if not head:
                head = chunk[:HEAD_BYTES]
            digest.update(chunk)
            size += len(chunk)
    return EprintFile(path=Path(path), kind=detect_kind(head), size=size, sha256=digest.hexdigest())


__all__ = [
    "ARXIV_API_BASE",
    "ARXIV_BASE",
    "ArxivError",
    "ArxivNotFound",
    "ArxivQueryError",
    "ArxivSource",
    "ArxivThrottled",
    "ArxivUnavailable",
    "EprintFile",
    "KINDS",
    "LIMITER",
    "PaperMeta",
    "RateLimiter",
    "describe_file",
    "detect_kind",
    "month_query",
    "month_windows",
    "paper_from_result",
    "parse_feed",
    "parse_month",
    "split_id",
]
