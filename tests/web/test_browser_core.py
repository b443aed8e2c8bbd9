"""The platform's foundation in a real browser: dashboard under the CSP, sign-up to login, KaTeX preview, XSS corpus."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.browser import add_user, log_in

pytestmark = pytest.mark.browser

ADMIN = ("admin@example.org", "admin-password-1")
AUTHOR = ("author@example.org", "author-password-1")


# Renders Markdown+LaTeX through POST /preview (the one renderer) into a probe element and typesets it as the
# editor's live preview does (static/app.js: innerHTML of the sanitised fragment, then TB.typeset). Waits until
# every image in the probe has loaded or failed, then one more task, so an event handler would have run.
RENDER = """async ([text, id]) => {
  const response = await fetch("/preview", {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": window.TB.csrfToken()},
    body: new URLSearchParams({text}).toString()});
  if (!response.ok) throw new Error("preview answered " + response.status);
  const probe = document.createElement("div");
  probe.id = id;
  document.querySelector("main").appendChild(probe);
  probe.innerHTML = await response.text();
  window.TB.typeset(probe);
  for (const a of probe.querySelectorAll("a")) a.click();
  await Promise.all([...probe.querySelectorAll("img")].map((img) => img.complete ? null : new Promise((done) => {
    img.addEventListener("load", done); img.addEventListener("error", done); })));
  await new Promise((done) => setTimeout(done, 0));
  return probe.innerHTML;
}"""

# What the rendered probe holds that could run code: script-like elements, on* attributes, non-web link targets.
DANGER = """(id) => {
  const probe = document.getElementById(id);
  const found = [];
  for (const el of probe.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    if (["script", "img", "svg", "iframe", "object", "embed", "style", "form", "input"].includes(tag)
        && !el.closest(".katex")) found.push("<" + tag + ">");
    for (const attr of el.attributes) {
      if (attr.name.toLowerCase().startsWith("on")) found.push(tag + "[" + attr.name + "]");
      if (["href", "src", "xlink:href", "action", "formaction"].includes(attr.name.toLowerCase())
          && !/^(https?:|mailto:|#|\\/)/i.test(attr.value.trim())) {
        found.push(tag + "[" + attr.name + "=" + attr.value + "]");
      }
    }
  }
  return found;
}"""


def test_dashboard_loads_under_the_csp(page: Any, browser_log: Any) -> None:
    response = page.goto("/")
    assert response.status == 200
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.get_by_test_id("dashboard-contributors").text_content() == "0"
    assert page.get_by_test_id("dashboard-questions").text_content() == "0"
    # the scripts the CSP allows did run: KaTeX and the platform's app.js from /static
    assert page.evaluate("typeof window.katex.render") == "function"
    assert page.evaluate("typeof window.TB.typeset") == "function"
    # an inline script is refused: the CSP violation is a console error, which the harness catches
    page.evaluate("""() => { const s = document.createElement("script"); s.textContent = "window.__inline = 1";
                             document.body.appendChild(s); }""")
    assert page.evaluate("typeof window.__inline") == "undefined"
    page.evaluate("1")  # let the violation's console message arrive
    assert browser_log.take("Content Security Policy")


def test_sign_up_verify_by_the_outbox_link_and_log_in(page: Any, open_page: Any, platform: Any) -> None:
    email, password = "new.author@example.org", "correct-horse-7"
    page.goto("/")
    page.get_by_test_id("nav-signup").click()
    page.get_by_test_id("signup-email").fill(email)
    page.get_by_test_id("signup-password").fill(password)
    page.get_by_test_id("signup-submit").click()
    assert email in page.get_by_test_id("signup-done").text_content()

    page.goto("/login")  # not yet: an unverified address cannot log in
    page.get_by_test_id("login-email").fill(email)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()
    assert "Confirm your email address first" in page.get_by_test_id("form-error").text_content()

    add_user(platform, *ADMIN, admin=True)
    admin = open_page()
    log_in(admin, *ADMIN)
    admin.get_by_test_id("nav-outbox").click()
    row = admin.locator(f'[data-testid="outbox-row"][data-to="{email}"]')
    assert row.get_by_test_id("outbox-subject").text_content() == "IMProofBench: confirm your email address"
    link = row.get_by_test_id("outbox-link").get_attribute("href")
    assert link.startswith(platform.url + "/verify/")

    page.goto(link)
    assert page.get_by_test_id("verify-ok").is_visible()
    page.goto(link)  # single use
    assert page.get_by_test_id("verify-failed").is_visible()
    log_in(page, email, password)
    assert "contributor" in page.get_by_test_id("nav-user").text_content()
    page.get_by_test_id("logout").click()
    assert page.get_by_test_id("nav-login").is_visible()


def test_preview_typesets_math_with_katex(page: Any, platform: Any, browser_log: Any) -> None:
    add_user(platform, *AUTHOR)
    log_in(page, *AUTHOR)
    page.evaluate(RENDER, ["The area: $\\int_0^1 x^2\\,dx = \\tfrac13$.", "probe"])
    math = page.locator("#probe .katex")
    assert math.count() == 1
    assert math.locator("annotation").text_content() == "\\int_0^1 x^2\\,dx = \\tfrac13"
    assert page.locator("#probe .katex-html .mfrac").count() == 1  # \tfrac13 laid out as a fraction
    assert page.locator("#probe .katex-error").count() == 0
    browser_log.snap(page, "preview-math")


XSS = {
    "script tag": "<script>window.__xss = 1; alert(1)</script>",
    "img onerror": '<img src=x onerror="window.__xss = 1; alert(1)">',
    "svg onload": '<svg onload="window.__xss = 1; alert(1)"></svg>',
    "iframe javascript": '<iframe src="javascript:alert(1)"></iframe>',
    "html javascript link": '<a href="javascript:window.__xss = 1; alert(1)">click</a>',
    "markdown javascript link": "[click](javascript:window.__xss=1)",
    "markdown javascript autolink": "<javascript:alert(1)>",
    "markdown data link": "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "markdown image onerror": '![x" onerror="window.__xss=1](x)',
    "katex href": "$\\href{javascript:alert(1)}{x}$",
    "katex url": "$\\url{javascript:window.__xss=1}$",
    "katex display href": "$$\\href{javascript:window.__xss=1}{\\text{click}}$$",
    "katex bracket href": "\\(\\href{javascript:alert(1)}{x}\\)",
    "katex error path": "$<img src=a onerror=alert(1)>%$",
    "katex htmlData": "$\\htmlData{onclick=alert(1)}{x}$",
    "katex includegraphics": "$\\includegraphics{javascript:alert(1)}$",
    "deep nesting": "> " * 200 + "<img src=x onerror=alert(1)>" + " *x" * 200,
    "deep braces": "$" + "{" * 400 + "x" + "}" * 400 + "$",
    "macro bomb": "$\\def\\a{\\a\\a}\\a$",
}


def test_xss_corpus_never_runs(page: Any, platform: Any, browser_log: Any) -> None:
    add_user(platform, *AUTHOR)
    log_in(page, *AUTHOR)
    found = {}
    for n, (name, payload) in enumerate(XSS.items()):
        page.evaluate(RENDER, [payload, f"probe-{n}"])
        danger = page.evaluate(DANGER, f"probe-{n}")
        if danger or browser_log.dialogs or page.evaluate("typeof window.__xss") != "undefined":
            found[name] = (danger, list(browser_log.dialogs), page.evaluate("typeof window.__xss"))
    browser_log.snap(page, "xss-corpus")
    assert found == {}
    assert browser_log.dialogs == []
    assert page.url == platform.url + "/"  # no link click went anywhere
