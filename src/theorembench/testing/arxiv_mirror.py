"""A tiny loopback HTTP server that plays arXiv for tests (test double).

It serves two endpoints on 127.0.0.1:

* ``GET /api/query`` answers with whatever the *routes* choose from the query
  parameters (recorded Atom files, usually);
* ``GET /e-print/<id>`` serves configured files or bytes (id -> content), else 404;
* ``GET /oai`` (arXiv's OAI-PMH) answers from the *oai* routes, chosen the same way from the
  query parameters (``verb``, ``identifier``, ``resumptionToken``...), as ``text/xml``;

and it can inject faults (the next *k* requests answer 503, 429, ...), delay
every answer by a fixed latency, and logs every request it saw.

Routes are either a function ``params -> answer | None`` or a list of
``(condition, answer)`` rules tried in order, where a condition is a function
``params -> bool`` or a dict ``{param: expected}`` in which ``expected`` is a
string (exact match), a compiled regex (``search``) or a predicate on the value.
An answer is a :class:`Reply`, a :class:`~pathlib.Path` (200 with the file's
bytes) or ``bytes`` (200). Nothing matching gives 404.

Example::

    rules = [
        ({"id_list": "1605.08386"}, Path("id_1605.08386_math.CO.xml")),
        ({"search_query": re.compile("submittedDate"), "start": "0"}, Path("feed.xml")),
        ({"search_query": re.compile("submittedDate")}, Path("no_results.xml")),
        ({"id_list": "abc"}, Reply(400, Path("id_abc_http400_error.xml"))),
    ]
    with ArxivMirror(rules, eprints={"2503.20170": Path("eprint.tar.gz")}) as mirror:
        ...  # ArxivSource(mirror.base_url, ...)
        assert mirror.requests[0].path == "/api/query"
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union
from urllib.parse import parse_qs, unquote, urlsplit

ATOM = "application/atom+xml; charset=utf-8"
OAI_XML = "text/xml; charset=utf-8"


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: ``body`` is bytes or a file to read at answer time.

    ``send_length=False`` leaves out ``Content-Length``: the body then ends when the
    connection closes, as a server that streams an answer of unknown size does.
    """

    status: int = 200
    body: bytes | Path = b""
    content_type: str = ATOM
    headers: Mapping[str, str] = field(default_factory=dict)
    send_length: bool = True

    def payload(self) -> bytes:
        return self.body.read_bytes() if isinstance(self.body, Path) else bytes(self.body)


@dataclass(frozen=True)
class LoggedRequest:
    """One request the mirror saw (``time`` from ``time.monotonic``) and the status it got."""

    path: str
    query: dict[str, str]
    time: float
    status: int


Answer = Union[Reply, Path, bytes]
Condition = Union[Callable[[dict[str, str]], bool], Mapping[str, Any]]
Routes = Union[Callable[[dict[str, str]], Union[Answer, None]], Sequence[tuple[Condition, Answer]]]


def _value_matches(expected: Any, value: str | None) -> bool:
    if value is None:
        return False
    if isinstance(expected, re.Pattern):
        return expected.search(value) is not None
    if callable(expected):
        return bool(expected(value))
    return value == str(expected)


def _condition_holds(condition: Condition, params: dict[str, str]) -> bool:
    if callable(condition):
        return bool(condition(params))
    return all(_value_matches(expected, params.get(name)) for name, expected in condition.items())


def _as_reply(answer: Answer, content_type: str) -> Reply:
    if isinstance(answer, Reply):
        return answer
    return Reply(200, answer, content_type)


class ArxivMirror:
    """Loopback stand-in for export.arxiv.org and arxiv.org/e-print (see the module docstring)."""

    def __init__(
        self,
        routes: Routes = (),
        *,
        oai: Routes = (),
        eprints: Mapping[str, Answer] | None = None,
        faults: int = 0,
        fault_status: int = 503,
        retry_after: float | None = None,
        latency_s: float = 0.0,
    ) -> None:
        self.routes = routes
        self.oai = oai
        self.eprints: dict[str, Answer] = dict(eprints or {})
        self.latency_s = latency_s
        self.requests: list[LoggedRequest] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._faults_left = 0
        self._fault_status = 503
        self._retry_after: float | None = None
        self._lock = threading.Lock()
        self.fail_next(faults, fault_status, retry_after)

        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                mirror._handle(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="arxiv-mirror", daemon=True
        )
        self._thread.start()
        self._stopped = False

    # ----------------------------------------------------------------- control

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def fail_next(self, count: int, status: int = 503, retry_after: float | None = None) -> None:
        """The next ``count`` requests (any endpoint) answer ``status`` with an empty body."""
        with self._lock:
            self._faults_left = count
            self._fault_status = status
            self._retry_after = retry_after

    def requests_to(self, prefix: str) -> list[LoggedRequest]:
        """Logged requests whose path starts with ``prefix`` (``"/api/query"``, ``"/e-print/"``)."""
        with self._lock:
            return [r for r in self.requests if r.path.startswith(prefix)]

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ArxivMirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- answering

    def _route_query(self, params: dict[str, str], routes: Routes | None = None, content_type: str = ATOM) -> Reply:
        routes = self.routes if routes is None else routes
        if callable(routes):
            answer = routes(params)
            return _as_reply(answer, content_type) if answer is not None else Reply(404, b"no route", "text/plain")
        for condition, answer in routes:
            if _condition_holds(condition, params):
                return _as_reply(answer, content_type)
        return Reply(404, b"no route for this query", "text/plain")

    def _route_eprint(self, paper_id: str) -> Reply:
        answer = self.eprints.get(paper_id)
        if answer is None:
            answer = self.eprints.get(re.sub(r"v\d+$", "", paper_id))
        if answer is None:
            return Reply(404, b"no such e-print", "text/html")
        return _as_reply(answer, "application/octet-stream")

    def _choose(self, path: str, params: dict[str, str]) -> Reply:
        with self._lock:
            if self._faults_left > 0:
                self._faults_left -= 1
                headers = {} if self._retry_after is None else {"Retry-After": f"{self._retry_after:g}"}
                return Reply(self._fault_status, b"", "text/plain", headers)
        if path == "/api/query":
            return self._route_query(params)
        if path == "/oai":
            return self._route_query(params, self.oai, OAI_XML)
        if path.startswith("/e-print/"):
            return self._route_eprint(unquote(path[len("/e-print/") :]))
        return Reply(404, b"not found", "text/plain")

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        # "In flight" spans receipt to just before the answer is written: a client
        # that waits for each answer can then never be seen overlapping itself.
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            parts = urlsplit(handler.path)
            params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            received = time.monotonic()
            try:
                reply = self._choose(parts.path, params)
                body = reply.payload()
            except Exception as exc:  # a broken route must show up as a 500, not a hang
                reply, body = Reply(500, b"", "text/plain"), f"mirror error: {exc!r}".encode()
            if self.latency_s:
                time.sleep(self.latency_s)
            with self._lock:
                self.requests.append(LoggedRequest(parts.path, params, received, reply.status))
        finally:
            with self._lock:
                self._in_flight -= 1
        handler.send_response(reply.status)
        handler.send_header("Content-Type", reply.content_type)
        if reply.send_length:
            handler.send_header("Content-Length", str(len(body)))
        else:
            handler.close_connection = True
            handler.send_header("Connection", "close")
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        try:
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading (a capped download)
            handler.close_connection = True

__all__ = ["ATOM", "OAI_XML", "ArxivMirror", "LoggedRequest", "Reply"]
