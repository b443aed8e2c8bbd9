"""Stage 1 retrieval from arXiv: paper metadata from the export API and LaTeX e-prints.

Pure Python, no database: :class:`ArxivSource` returns typed records
(:class:`PaperMeta`, :class:`EprintFile`) that the store and the CLI persist.
This module is the client; the parts it is built from live beside it and are
re-exported here:

* :mod:`.arxiv_feed`: :class:`PaperMeta`, arXiv ids, month-window queries and
  Atom feed parsing.
* :mod:`.arxiv_http`: the process-wide :data:`LIMITER` and GET with retries.
  arXiv asks for at most one request every few seconds over a single
  connection; the limiter is held for the whole request (queries *and* e-print
  downloads), so requests never overlap and are spaced by ``delay_s``. Retries
  widen the spacing exponentially (``delay_s * 2**attempt``, or ``Retry-After``
  when larger).
* :mod:`.arxiv_eprints`: :func:`detect_kind` and the e-print cache. E-prints are
  cached in ``cache_dir`` under ``<id>[v<N>]<ext>``; the extension comes from
  :func:`detect_kind`, which looks only at the first bytes.
* :mod:`.arxiv_errors`: the :class:`ArxivError` family.

Queries are built and paged by the ``arxiv`` package (v4): :class:`arxiv.Search`
makes the query parameters and :class:`arxiv.Client` walks the pages. Its
transport is replaced (``Client._parse_feed`` is overridden) so that every
request goes through the limiter, retry policy and error mapping, and
``Client.query_url_format`` points the query at ``{base_url}/api/query``.
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import arxiv
import requests
from arxiv import _feed as arxiv_feed

from theorembench.sources.arxiv_eprints import (
    DEFAULT_MAX_EPRINT_BYTES,
    EXTENSIONS,
    HEAD_BYTES,
    KINDS,
    EprintFile,
    cache_name,
    describe_file,
    detect_kind,
    find_cached,
    stream_to_partial,
)
from theorembench.sources.arxiv_errors import (
    ArxivError,
    ArxivNotFound,
    ArxivQueryError,
    ArxivThrottled,
    ArxivUnavailable,
    DownloadTooLarge,
)
from theorembench.sources.arxiv_feed import (
    ARXIV_API_BASE,
    ARXIV_BASE,
    PaperMeta,
    api_error_message,
    entry_licenses,
    month_query,
    month_windows,
    paper_from_result,
    parse_feed,
    parse_month,
    split_id,
)
from theorembench.sources.arxiv_http import (
    LIMITER,
    MAX_RETRY_AFTER_S,
    USER_AGENT,
    RateLimiter,
    read_feed_body,
    request,
)

log = logging.getLogger(__name__)

_CATEGORY_RE = re.compile(r"^[A-Za-z][A-Za-z-]*(?:\.[A-Za-z*-]+|\*)?$")


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


class ArxivSource:
    """Polite arXiv client: metadata search, id look-up and cached e-print downloads.

    ``base_url`` (e.g. ``http://127.0.0.1:8080``) sends both the API query
    (``{base}/api/query``) and the e-print downloads (``{base}/e-print/<id>``) to a
    mirror; by default they go to export.arxiv.org and arxiv.org. ``max_eprint_bytes`` caps one
    e-print download (default :data:`DEFAULT_MAX_EPRINT_BYTES`, 100 MB), enforced while it streams.
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
        max_eprint_bytes: int = DEFAULT_MAX_EPRINT_BYTES,
    ) -> None:
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, got {delay_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if not 1 <= page_size <= 2000:
            raise ValueError(f"page_size must be between 1 and 2000 (the API's limit), got {page_size}")
        if max_eprint_bytes < 1:
            raise ValueError(f"max_eprint_bytes must be >= 1, got {max_eprint_bytes}")
        self.max_eprint_bytes = int(max_eprint_bytes)
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
        """GET ``url`` under the limiter with bounded, exponentially spaced retries (:func:`.arxiv_http.request`)."""
        return request(
            self._session, url, consume, what=what, limiter=self.limiter, delay_s=self.delay_s,
            max_retries=self.max_retries, clock=self.clock, sleep=self.sleep, timeout_s=self.timeout_s,
        )  # fmt: skip

    # ----------------------------------------------------------------- queries

    def _fetch_feed(self, url: str, *, first_page: bool, licenses: dict[str, str]) -> arxiv_feed.ParsedFeed:
        """Fetch and parse one page; an empty later page is re-asked (arXiv's known flake)
        up to ``max_retries`` times and then taken as the end of the results."""
        for empty_tries in range(self.max_retries + 1):
            body = self._request(url, read_feed_body, what="query")
            message = api_error_message(body)
            if message is not None:
                raise ArxivQueryError(f"arXiv API rejected the query: {message}", url=url)
            feed = arxiv_feed.parse(body)
            if feed.malformed:
                raise ArxivError(f"arXiv returned a malformed feed for {url}: {feed.error}")
            licenses.update(entry_licenses(body))
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
        return cache_name(arxiv_id, version)

    def cached_eprint(self, arxiv_id: str, version: int | None = None) -> EprintFile | None:
        """The cached e-print for this id/version, if any (no request)."""
        base_id, version = self._resolve(arxiv_id, version)
        return find_cached(self.cache_dir, self._cache_name(base_id, version))

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
        ``kind == "pdf"``. A body over ``max_eprint_bytes`` raises :class:`DownloadTooLarge`
        (not retried) and leaves nothing in the cache.
        """
        base_id, version = self._resolve(arxiv_id, version)
        cached = self.cached_eprint(base_id, version)
        if cached is not None:
            return cached
        name = self._cache_name(base_id, version)
        url = f"{self.eprint_base}/{base_id}" + (f"v{version}" if version else "")
        self.cache_dir.mkdir(parents=True, exist_ok=True)

        def consume(resp: requests.Response) -> tuple[Path, bytes, int, str]:
            return stream_to_partial(resp, self.cache_dir, name, max_bytes=self.max_eprint_bytes)

        tmp, head, size, sha = self._request(url, consume, what="e-print")
        if size == 0:
            tmp.unlink(missing_ok=True)
            raise ArxivError(f"arXiv sent an empty e-print for {base_id}: {url}")
        kind = detect_kind(head)
        final = self.cache_dir / (name + EXTENSIONS[kind])
        os.replace(tmp, final)
        log.info("e-print %s -> %s (%s, %d bytes)", url, final, kind, size)
        return EprintFile(path=final, kind=kind, size=size, sha256=sha)


__all__ = [
    "ARXIV_API_BASE",
    "ARXIV_BASE",
    "ArxivError",
    "ArxivNotFound",
    "ArxivQueryError",
    "ArxivSource",
    "ArxivThrottled",
    "ArxivUnavailable",
    "DEFAULT_MAX_EPRINT_BYTES",
    "DownloadTooLarge",
    "EprintFile",
    "HEAD_BYTES",
    "KINDS",
    "LIMITER",
    "MAX_RETRY_AFTER_S",
    "PaperMeta",
    "RateLimiter",
    "USER_AGENT",
    "describe_file",
    "detect_kind",
    "month_query",
    "month_windows",
    "paper_from_result",
    "parse_feed",
    "parse_month",
    "split_id",
]
