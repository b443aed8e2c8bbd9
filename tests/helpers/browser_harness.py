"""Real-browser test harness: the platform served by uvicorn on loopback, driven by Playwright over Debian's Chromium.

Fixtures (imported by tests/conftest.py; also loadable with ``-p browser_harness``):

- ``platform_app``: the ASGI app under test, ``create_app(db=<temp SQLite>)``; a test module may override it.
- ``platform``: that app served on 127.0.0.1 and a free port in a background thread (``.url``, ``.db``, ``.app``).
- ``chromium``: one headless Chromium per session (``/usr/bin/chromium`` or ``$THEOREMBENCH_CHROMIUM``).
- ``open_page``: a new page in a fresh browser context (its own cookies: one per user) on the platform.
- ``page``: the first such page.
- ``browser_log``: what the pages did. A console error, an uncaught page error, any dialog (``alert`` run by an
  XSS payload opens one) or a 5xx response fails the test at teardown unless the test takes it out of the log.

Screenshots: a full-page PNG after every main-frame navigation (taken at the next Playwright call on the page, once
the page has loaded), at every ``browser_log.snap(page, label)`` and at the end of the test, under
``$THEOREMBENCH_SCREENSHOTS`` or ``<pytest basetemp>/screens``, one folder per test; the run prints the folder.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ENV = "THEOREMBENCH_CHROMIUM"
SCREENSHOTS_ENV = "THEOREMBENCH_SCREENSHOTS"
DEFAULT_CHROMIUM = "/usr/bin/chromium"  # Debian's package (scripts/setup.sh installs it)
READY_DEADLINE_S = 30.0
_screens_root: list[Path] = []  # the folder this run wrote screenshots to, for the summary


def chromium_path() -> str:
    return os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM


def browser_missing() -> str | None:
    """Why no browser test can run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (run scripts/setup.sh: dev extra)"
    exe = chromium_path()
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)) and shutil.which(exe) is None:
        return f"Chromium not found at {exe} (run scripts/setup.sh: Debian's chromium package, or set {CHROMIUM_ENV})"
    return None


# --- the platform on loopback -------------------------------------------------------------------------------------


class LiveServer:
    """An ASGI app served by uvicorn in a daemon thread on a socket bound before the thread starts."""

    def __init__(self, app: Any, db: str | None = None, host: str = "127.0.0.1") -> None:
        import uvicorn

        self.app, self.db = app, db
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind((host, 0))
        # Listening before uvicorn runs: a client's connection waits in the backlog until the server accepts it,
        # so readiness is one request answered, not a guess.
        self._sock.listen(128)
        self.url = f"http://{host}:{self._sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="auto")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)
        self.error: BaseException | None = None

    def start(self, ready_path: str = "/healthz") -> LiveServer:
        import httpx

        self._thread.start()
        deadline = time.monotonic() + READY_DEADLINE_S
        attempts, last = 0, "no answer"
        while attempts < 30 and time.monotonic() < deadline:
            attempts += 1
            if not self._thread.is_alive():
                raise RuntimeError(f"the platform server stopped while starting ({last})")
            try:
                wait = min(5.0, max(0.1, deadline - time.monotonic()))
                answer = httpx.get(self.url + ready_path, trust_env=False, timeout=wait)
            except httpx.TransportError as exc:  # still starting: the request waited in the backlog and timed out
                last = repr(exc)
                continue
            if answer.status_code == 200:
                return self
            raise RuntimeError(f"{ready_path} answered {answer.status_code}: {answer.text[:200]}")
        self.stop()
        raise RuntimeError(f"the platform server was not ready within {READY_DEADLINE_S:.0f} s ({last})")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self._sock.close()
        if self._thread.is_alive():
            raise RuntimeError("the platform server thread did not stop within 15 s")


@pytest.fixture
def platform_db(tmp_path: Path) -> str:
    return str(tmp_path / "platform.db")


@pytest.fixture
def platform_app(platform_db: str) -> Any:
    from theorembench.web.app import create_app

    return create_app(db=platform_db, secret_key="browser-tests-secret")


@pytest.fixture
def platform(platform_app: Any, platform_db: str) -> Iterator[LiveServer]:
    server = LiveServer(platform_app, db=platform_db).start()
    try:
        yield server
    finally:
        server.stop()


# --- the browser ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One browser per test module: Playwright's sync API keeps an event loop running in this thread while it
    is started, so it must stop before other modules' tests call ``asyncio.run``."""
    reason = browser_missing()
    if reason:
        pytest.skip(reason)  # tests/ci_rules.py turns this into a failure under CI=true
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # Chromium's sandbox refuses to start as root ("Running as root without --no-sandbox is not supported"):
        # Debian's build does too (checked with chromium_sandbox=True as root: launch fails), so as root, as in
        # CI containers, the tests run it with --no-sandbox (Playwright adds the flag when chromium_sandbox is
        # False). As any other user the sandbox stays on (user namespaces; checked as `nobody`).
        browser = pw.chromium.launch(
            executable_path=chromium_path(), headless=True, chromium_sandbox=os.geteuid() != 0
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def screens_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(os.environ[SCREENSHOTS_ENV]) if os.environ.get(SCREENSHOTS_ENV) else (
        tmp_path_factory.getbasetemp() / "screens")
    root.mkdir(parents=True, exist_ok=True)
    _screens_root[:] = [root]
    return root


_LOAD_ERROR = re.compile(
    r"^Failed to load resource: the server responded with a status of (?P<status>\d+) .*\((?P<url>\S+):\d*\)$")


def _slug(text: str, limit: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-")[:limit] or "page"


@dataclass
class BrowserLog:
    """What the pages of one test did; anything in ``problems()`` fails the test at teardown."""

    folder: Path
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    screenshots: list[Path] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)

    documents: set[tuple[str, int]] = field(default_factory=set)  # (URL, HTTP status) of pages loaded in frames

    def problems(self) -> list[str]:
        console = [m for m in self.console_errors if not self._expected_load_error(m)]
        return ([f"console error: {m}" for m in console] + [f"page error: {m}" for m in self.page_errors]
                + [f"dialog opened: {m}" for m in self.dialogs] + [f"server error: {m}" for m in self.server_errors])

    def _expected_load_error(self, message: str) -> bool:
        """Chromium logs a page answered with 4xx as a failed load; the test sees and checks that status itself.

        So does its own probe for /favicon.ico, which no page asks for. Subresources (scripts, styles, fetches)
        answered with an error stay problems.
        """
        found = _LOAD_ERROR.match(message)
        if not found:
            return False
        url, status = found.group("url"), int(found.group("status"))
        return (400 <= status < 500 and (url, status) in self.documents) or (
            status == 404 and url.endswith("/favicon.ico"))

    def take(self, text: str) -> list[str]:
        """Remove and return the console errors containing ``text`` (a test that provoked them on purpose)."""
        taken = [m for m in self.console_errors if text in m]
        self.console_errors[:] = [m for m in self.console_errors if text not in m]
        return taken

    def snap(self, page: Any, label: str | None = None) -> Path | None:
        """A full-page screenshot of ``page`` now, named by ``label`` or the page's path."""
        if page.is_closed():
            return None
        name = label or re.sub(r"^https?://[^/]+", "", page.url)
        path = self.folder / f"{len(self.screenshots) + 1:02d}-{_slug(name)}.png"
        try:
            page.screenshot(path=str(path), full_page=True)
        except Exception as exc:  # a page navigating away mid-shot: note it, the test itself decides
            warnings.warn(f"screenshot {path.name} failed: {exc}", stacklevel=2)
            return None
        self.screenshots.append(path)
        return path


class _Watch:
    """Takes a screenshot once a page has loaded after a main-frame navigation."""

    def __init__(self, page: Any, log: BrowserLog) -> None:
        self.page, self.log = page, log
        self.pending = False
        self.busy = False

    def navigated(self, frame: Any) -> None:
        if frame.parent_frame is None:  # cached on the frame: no call to the browser inside an event handler
            self.pending = True
            self.log.navigations.append(frame.url)

    def after_call(self) -> None:
        if not self.pending or self.busy:
            return
        self.busy, self.pending = True, False  # the calls below come back through the watch: not again
        try:
            if not self.page.is_closed():
                self.page.wait_for_load_state("load")
                self.log.snap(self.page)
        finally:
            self.busy = False

    def adopt(self, value: Any) -> Any:
        from playwright.sync_api import Locator

        if type(value) is Locator:
            value.__class__ = _WatchedLocator
            value._tb_watch = self
        return value


class _Watched:
    """Every public call through a watched page or locator lets the watch take its pending screenshot."""

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if name.startswith("_"):
            return value
        watch: _Watch = object.__getattribute__(self, "_tb_watch")
        if callable(value) and hasattr(value, "__self__"):

            @functools.wraps(value)
            def call(*args: Any, **kwargs: Any) -> Any:
                result = value(*args, **kwargs)
                watch.after_call()
                return watch.adopt(result)

            return call
        return watch.adopt(value)


def _watched_classes() -> tuple[type, type]:
    from playwright.sync_api import Locator, Page

    page_cls = type("_WatchedPage", (_Watched, Page), {})
    locator_cls = type("_WatchedLocator", (_Watched, Locator), {})
    return page_cls, locator_cls


_WatchedPage: type = object
_WatchedLocator: type = object


@pytest.fixture
def browser_log(request: pytest.FixtureRequest, screens_root: Path) -> BrowserLog:
    folder = screens_root / _slug(request.node.nodeid.rsplit("/", 1)[-1].replace(".py::", "-"), 100)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return BrowserLog(folder)


@pytest.fixture
def open_page(chromium: Any, platform: LiveServer, browser_log: BrowserLog) -> Iterator[Callable[[], Any]]:
    """``open_page()``: a page in a new context (a separate user) with the platform as its base URL."""
    global _WatchedPage, _WatchedLocator
    if _WatchedPage is object:
        _WatchedPage, _WatchedLocator = _watched_classes()
    contexts: list[Any] = []
    pages: list[Any] = []

    def on_console(message: Any) -> None:
        if message.type == "error":
            where = message.location or {}
            browser_log.console_errors.append(f"{message.text} ({where.get('url', '')}:{where.get('lineNumber', '')})")

    def on_dialog(dialog: Any) -> None:
        browser_log.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_response(response: Any) -> None:
        if response.request.resource_type == "document":  # local fields: no call to the browser in a handler
            browser_log.documents.add((response.url, response.status))
        if response.status >= 500:
            browser_log.server_errors.append(f"{response.status} {response.request.method} {response.url}")

    def make() -> Any:
        context = chromium.new_context(base_url=platform.url, viewport={"width": 1280, "height": 900})
        context.on("console", on_console)
        context.on("weberror", lambda web: browser_log.page_errors.append(f"{web.error.name}: {web.error.message}"))
        context.on("dialog", on_dialog)
        context.on("response", on_response)
        contexts.append(context)
        page = context.new_page()
        watch = _Watch(page, browser_log)
        page.on("framenavigated", watch.navigated)
        page.__class__ = _WatchedPage
        page._tb_watch = watch
        pages.append(page)
        return page

    yield make
    for page in pages:
        if not page.is_closed():
            page._tb_watch.after_call()  # the page a last navigation led to, if not shot yet
            page._tb_watch.busy = True  # then the page as the test left it, without the watch
            browser_log.snap(page, f"end-{pages.index(page) + 1}")
    for context in contexts:
        context.close()
    problems = browser_log.problems()
    if problems:
        pytest.fail("the browser reported:\n  " + "\n  ".join(problems), pytrace=False)


@pytest.fixture
def page(open_page: Callable[[], Any]) -> Any:
    return open_page()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _screens_root and any(_screens_root[0].rglob("*.png")):
        terminalreporter.write_line(f"browser screenshots: {_screens_root[0]}")
