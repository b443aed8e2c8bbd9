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


__all__ = ["ArxivError", "ArxivNotFound", "ArxivQueryError", "ArxivThrottled", "ArxivUnavailable"]
