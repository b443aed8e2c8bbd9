"""The browser harness itself, over a tiny app: loopback server, screenshots per page, problems fail the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import TESTS

pytestmark = pytest.mark.browser
HERE = TESTS  # the browser harness is the module helpers.browser_harness under it

TINY_APP = '''
from fastapi import FastAPI
from fastapi.responses import HTMLResponse, PlainTextResponse


def tiny_app():
    app = FastAPI()

    @app.get("/healthz")
    def healthz():
        return PlainTextResponse("ok")

    @app.get("/favicon.ico")
    def favicon():
        return PlainTextResponse("", status_code=204)

    @app.get("/", response_class=HTMLResponse)
    def home():
        return '<h1>home</h1><a id="next" href="/two">next</a>'

    @app.get("/two", response_class=HTMLResponse)
    def two():
        return '<h1 id="title">two</h1><form method="post" action="/three"><button data-testid="go">go</button></form>'

    @app.post("/three", response_class=HTMLResponse)
    def three():
        return '<h1 id="title">three</h1>'

    @app.get("/bad/{kind}", response_class=HTMLResponse)
    def bad(kind: str):
        scripts = {"alert": "alert(1)", "console": "console.error('boom')", "throw": "throw new Error('kaput')"}
        return f"<p>bad</p><script>{scripts[kind]}</script>"

    @app.get("/crash")
    def crash():
        raise RuntimeError("server bug")

    return app
'''

namespace: dict[str, Any] = {}
exec(compile(TINY_APP, "tiny_app", "exec"), namespace)


@pytest.fixture
def platform_app() -> Any:
    return namespace["tiny_app"]()


def test_pages_are_served_and_each_gets_a_screenshot(page: Any, platform: Any, browser_log: Any) -> None:
    assert platform.url.startswith("http://127.0.0.1:")
    page.goto("/")
    page.click("#next")
    assert page.text_content("#title") == "two"
    page.get_by_test_id("go").click()
    assert page.locator("#title").text_content() == "three"
    names = [path.name for path in browser_log.screenshots]
    assert names == ["01-page.png", "02-two.png", "03-three.png"]
    assert all(path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for path in browser_log.screenshots)
    assert browser_log.problems() == []


def test_the_server_stops_at_teardown(platform_app: Any) -> None:
    import httpx
    from helpers.browser_harness import LiveServer

    server = LiveServer(platform_app).start()
    assert httpx.get(server.url + "/healthz", trust_env=False).text == "ok"
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/healthz", trust_env=False)


def test_dialogs_console_errors_page_errors_and_5xx_fail_the_test(tmp_path: Path) -> None:
    (tmp_path / "tiny_app.py").write_text(TINY_APP)
    (tmp_path / "test_bad_pages.py").write_text(
        "import pytest\nfrom tiny_app import tiny_app\n\n"
        "@pytest.fixture\ndef platform_app():\n    return tiny_app()\n\n"
        "@pytest.mark.parametrize('kind', ['alert', 'console', 'throw'])\n"
        "def test_bad(page, kind):\n    page.goto('/bad/' + kind)\n    page.evaluate('1')\n\n"
        "def test_crash(page):\n    page.goto('/crash')\n\n"
        "def test_good(page):\n    page.goto('/')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(tmp_path)])
    env["THEOREMBENCH_SCREENSHOTS"] = str(tmp_path / "shots")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "helpers.browser_harness", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_bad_pages.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "5 passed, 4 errors" in out
    assert "dialog opened: alert: 1" in out
    assert "console error: boom" in out
    assert "page error: Error: kaput" in out
    assert "server error: 500 GET http" in out
    assert f"browser screenshots: {tmp_path / 'shots'}" in out
    assert sorted(path.name for path in (tmp_path / "shots" / "test_bad_pages-test_good").iterdir()) == [
        "01-page.png", "02-end-1.png"]
