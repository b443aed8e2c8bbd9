"""The errors the arXiv client raises about arXiv itself (all :class:`ArxivError`).

Shared by the feed parser (:mod:`.arxiv_feed`), the HTTP layer (:mod:`.arxiv_http`)
and the client (:mod:`.arxiv`), which re-exports them.
"""

from __future__ import annotations

from theorembench.common.errors import ServiceError


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


class DownloadTooLarge(ArxivError):
    """A download went over its size cap; ``bytes_read`` is how much of the body was read (0 when the
    announced ``Content-Length`` was already over the cap). Not retried: the same answer would come again."""

    def __init__(self, message: str, *, limit: int, bytes_read: int, url: str = "") -> None:
        super().__init__(message)
        self.limit = limit
        self.bytes_read = bytes_read
        self.url = url


__all__ = ["ArxivError", "ArxivNotFound", "DownloadTooLarge", "ArxivQueryError", "ArxivThrottled", "ArxivUnavailable"]
