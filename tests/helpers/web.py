"""The platform through its test client: sign-in, CSRF tokens, form posts, the tags of a page, the XSS corpus."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from fastapi.testclient import TestClient

PASSWORD = "correct horse 1"


def csrf_from(html: str) -> str:
    """The CSRF token of a page (a form's hidden field or the page's meta tag)."""
    return re.search(r'name="csrf[_-]token" (?:value|content)="([^"]+)"', html).group(1)


def fresh_token(client: TestClient, path: str = "/login") -> str:
    """A CSRF token of the client's session, read from the page at ``path``."""
    return csrf_from(client.get(path).text)


def sign_in(client: TestClient, email: str, password: str = PASSWORD):
    return client.post("/login", data={"email": email, "password": password, "csrf_token": fresh_token(client)},
                       follow_redirects=False)  # fmt: skip


def signed_in(app, email: str) -> TestClient:
    """A test client signed in as ``email`` (whose password is PASSWORD)."""
    client = TestClient(app)
    assert sign_in(client, email).status_code == 303
    return client


def post_form(client: TestClient, path: str, data: dict[str, str] | None = None):
    """POST a form with the session's CSRF token; redirects are returned, not followed."""
    return client.post(path, data=(data or {}) | {"csrf_token": fresh_token(client, "/")}, follow_redirects=False)


class FirstOrder:
    """A grading RNG that keeps the recorded order and names the answers A, B, C in it (the platform draws both)."""

    def shuffle(self, x: list) -> None:
        pass

    def sample(self, population: list[str], k: int) -> list[str]:
        return list(population[:k])


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside <script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.script_text.append(data)


def parse_tags(html: str) -> Tags:
    parser = Tags()
    parser.feed(html)
    return parser


XSS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "<div onclick=alert(1)>x</div>",
    "<svg onload=alert(1)>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](  javascript:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x](java&#115;cript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x]: javascript:alert(1)\n\n[x]",
    "<javascript:alert(1)>",
    "![i](javascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    r"\href{javascript:alert(1)}{x}",
    r"$\href{javascript:alert(1)}{x}$",
    r"$$\url{javascript:alert(1)}$$",
    "$<img src=a onerror=alert(1)>%$",
    "$$</span><script>alert(1)</script>$$",
    r"\(<svg/onload=alert(1)>\)",
    "`<script>alert(1)</script>`",
    "```html\n<script>alert(1)</script>\n```",
    "<style>body{background:url(javascript:alert(1))}</style>",
    "<iframe src=javascript:alert(1)></iframe>",
    '"><img src=x onerror=alert(1)>',
]
NESTED = ["[" * 10000 + "x" + "]" * 10000, "- " * 10000 + "x", "> " * 10000 + "x", "1. " * 10000 + "x",
          "*" * 10000 + "x" + "*" * 10000, "(" * 10000, "{" * 10000, "$" * 10000, r"\(" * 5000,
          "[a](" * 5000, "<" * 10000, "- [" * 5000]  # fmt: skip
