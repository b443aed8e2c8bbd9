"""The platform's foundation: accounts, sessions, CSRF, rate limits, invitations, the policy, headers, the renderer."""

from __future__ import annotations

import re
import time

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from helpers.web import NESTED, PASSWORD, XSS, csrf_from, fresh_token, parse_tags, sign_in

from theorembench.web import accounts
from theorembench.web.app import create_app
from theorembench.web.render import render_markdown

ADMIN = "admin@example.org"


def _link(app, to: str, path: str) -> str:
    bodies = [m["body"] for m in app.state.repo.mails() if m["to_addr"] == to]
    return re.search(rf"http://testserver(/{path}/[A-Za-z0-9_\-]+)", bodies[0]).group(1)


def _assert_inert(html: str) -> None:
    assert "<script" not in html.lower()
    for tag, attrs in parse_tags(html).tags:
        assert tag not in {"script", "iframe", "object", "embed", "img", "svg", "style"}, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            squashed = re.sub(r"[\s\x00-\x1f]", "", value).lower()
            assert not (name in {"href", "src", "action", "formaction"} and squashed.startswith("javascript:")), value


# -- sign-up, verification, login, logout ----------------------------------------


def test_signup_verify_login_logout(any_app):
    client = TestClient(any_app)
    page = client.get("/signup")
    assert page.status_code == 200 and 'id="signup-form"' in page.text
    form = {"email": "Ada@Example.org", "password": PASSWORD, "csrf_token": csrf_from(page.text)}
    done = client.post("/signup", data=form)
    assert done.status_code == 200 and 'data-testid="signup-done"' in done.text
    mails = any_app.state.repo.mails()
    assert [(m["to_addr"], m["subject"]) for m in mails] == [
        ("ada@example.org", "IMProofBench: confirm your email address")]
    assert sign_in(client, "ada@example.org").status_code == 403  # not verified yet
    link = _link(any_app, "ada@example.org", "verify")
    assert 'data-testid="verify-ok"' in client.get(link).text
    again = client.get(link)
    assert again.status_code == 404 and 'data-testid="verify-failed"' in again.text  # single use
    before = client.cookies.get("tb_session")
    ok = sign_in(client, "ada@example.org")
    assert ok.status_code == 303 and ok.headers["location"] == "/"
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower() and "Secure" not in cookie
    after = client.cookies.get("tb_session")
    assert after and after != before  # a new session id on login
    home = client.get("/")
    assert "ada@example.org (contributor)" in home.text and 'data-testid="logout"' in home.text
    assert any_app.state.repo.user_by_email("ada@example.org")["roles"] == {"contributor"}
    out = client.post("/logout", data={"csrf_token": csrf_from(home.text)}, follow_redirects=False)
    assert out.status_code == 303
    assert 'data-testid="nav-login"' in client.get("/").text
    stolen = TestClient(any_app, cookies={"tb_session": after})  # the old id no longer signs anyone in
    assert 'data-testid="nav-login"' in stolen.get("/").text


def test_wrong_password_and_unknown_user(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    client = TestClient(app)
    wrong = sign_in(client, ADMIN, "not the password")
    assert wrong.status_code == 401 and "Wrong email or password." in wrong.text
    unknown = sign_in(client, "nobody@example.org", PASSWORD)
    assert unknown.status_code == 401 and "Wrong email or password." in unknown.text
    assert 'data-testid="nav-login"' in client.get("/").text


def test_cookie_is_secure_over_https(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    client = TestClient(app, base_url="https://testserver")
    response = sign_in(client, ADMIN)
    assert response.status_code == 303 and "Secure" in response.headers["set-cookie"]
    assert "max-age=31536000" in response.headers["strict-transport-security"]


def test_login_rate_limit_answers_429_on_the_sixth_attempt(any_app):
    accounts.create_admin(any_app.state.repo, ADMIN, PASSWORD)
    client = TestClient(any_app)
    for _ in range(5):
        assert sign_in(client, ADMIN, "wrong password").status_code == 401
    sixth = sign_in(client, ADMIN)  # even the right password waits for the window to pass
    assert sixth.status_code == 429 and "Too many login attempts" in sixth.text
    other = TestClient(any_app)  # the same address (testclient) for another email is limited too
    assert sign_in(other, "someone@example.org").status_code == 429


def test_signup_rate_limit(app):
    client = TestClient(app)
    codes = []
    for i in range(6):
        token = fresh_token(client, "/signup")
        codes.append(client.post("/signup", data={"email": f"u{i}@example.org", "password": PASSWORD,
                                                  "csrf_token": token}).status_code)  # fmt: skip
    assert codes == [200, 200, 200, 200, 200, 429]
    assert len(app.state.repo.mails()) == 5


def test_signup_with_a_taken_address_tells_its_owner_only(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    client = TestClient(app)
    done = client.post("/signup", data={"email": ADMIN, "password": "another pass", "csrf_token": fresh_token(client)})
    assert done.status_code == 200 and 'data-testid="signup-done"' in done.text
    assert [m["subject"] for m in app.state.repo.mails()] == ["IMProofBench: sign-up attempt"]
    assert sign_in(TestClient(app), ADMIN, "another pass").status_code == 401


# -- CSRF -----------------------------------------------------------------------


def test_post_without_or_with_a_wrong_csrf_token_is_refused(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    client = TestClient(app)
    client.get("/login")
    data = {"email": ADMIN, "password": PASSWORD}
    assert client.post("/login", data=data).status_code == 403
    assert client.post("/login", data=data | {"csrf_token": "0" * 64}).status_code == 403
    other = TestClient(app)
    assert client.post("/login", data=data | {"csrf_token": fresh_token(other)}).status_code == 403  # another session's
    assert TestClient(app).post("/login", data=data | {"csrf_token": fresh_token(client)}).status_code == 403  # no cookie
    assert sign_in(client, ADMIN).status_code == 303
    assert client.post("/logout").status_code == 403
    assert "admin@example.org" in client.get("/").text  # still signed in
    header = client.post("/preview", data={"text": "*x*"}, headers={"X-CSRF-Token": csrf_from(client.get("/").text)})
    assert header.status_code == 200 and header.text == "<p><em>x</em></p>\n"
    assert client.post("/preview", data={"text": "*x*"}, headers={"X-CSRF-Token": "bad"}).status_code == 403


# -- invitations ----------------------------------------------------------------


def test_admin_invites_a_reviewer_single_use(any_app):
    accounts.create_admin(any_app.state.repo, ADMIN, PASSWORD)
    admin = TestClient(any_app)
    assert sign_in(admin, ADMIN).status_code == 303
    outbox = admin.get("/admin/outbox")
    assert outbox.status_code == 200 and 'id="invite-form"' in outbox.text
    sent = admin.post("/admin/invite", data={"email": "rev@example.org", "role": "reviewer",
                                             "csrf_token": csrf_from(outbox.text)})  # fmt: skip
    assert sent.status_code == 200 and 'data-testid="invite-sent"' in sent.text
    link = re.search(r'data-testid="outbox-link"[^>]*>http://testserver(/invite/[A-Za-z0-9_\-]+)<', sent.text).group(1)
    assert any_app.state.repo.mails()[0]["subject"] == "IMProofBench: invitation as reviewer"
    guest = TestClient(any_app)
    form = guest.get(link)
    assert form.status_code == 200 and 'data-testid="invite-role">reviewer<' in form.text
    accepted = guest.post(link, data={"password": PASSWORD, "csrf_token": csrf_from(form.text)})
    assert accepted.status_code == 200 and 'data-testid="invite-done"' in accepted.text
    user = any_app.state.repo.user_by_email("rev@example.org")
    assert user["roles"] == {"reviewer"} and user["verified"] is True
    assert sign_in(TestClient(any_app), "rev@example.org").status_code == 303
    assert guest.get(link).status_code == 404
    second = guest.post(link, data={"password": "other password", "csrf_token": csrf_from(form.text)})
    assert second.status_code == 404 and "already used or expired" in second.text


def test_expired_invitation_is_refused(app):
    token = accounts.invite(app.state.repo, "late@example.org", "grader", by=None, now=time.time() - 8 * 24 * 3600)
    client = TestClient(app)
    assert client.get(f"/invite/{token}").status_code == 404
    refused = client.post(f"/invite/{token}", data={"password": PASSWORD, "csrf_token": fresh_token(client)})
    assert refused.status_code == 404
    assert app.state.repo.user_by_email("late@example.org") is None
    assert client.get("/invite/not-a-token").status_code == 404


def test_invitation_for_an_existing_account_needs_that_account_signed_in(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    accounts.create_admin(app.state.repo, "other@example.org", PASSWORD)
    token = accounts.invite(app.state.repo, ADMIN, "grader", by=None)
    other = TestClient(app)
    sign_in(other, "other@example.org")
    page = other.get(f"/invite/{token}")
    assert 'data-testid="invite-login-first"' in page.text
    assert other.post(f"/invite/{token}", data={"csrf_token": csrf_from(page.text)}).status_code == 400
    owner = TestClient(app)
    sign_in(owner, ADMIN)
    done = owner.post(f"/invite/{token}", data={"csrf_token": csrf_from(owner.get(f"/invite/{token}").text)})
    assert done.status_code == 200
    assert app.state.repo.user_by_email(ADMIN)["roles"] == {"admin", "grader"}
    assert app.state.repo.user_by_email("other@example.org")["roles"] == {"admin"}


# -- policy, headers, pages ---------------------------------------------------------


def test_admin_pages_answer_404_to_everyone_else(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    token = accounts.invite(app.state.repo, "c@example.org", "contributor", by=None)
    member = TestClient(app)
    member.post(f"/invite/{token}", data={"password": PASSWORD, "csrf_token": fresh_token(member)})
    sign_in(member, "c@example.org")
    anonymous = TestClient(app)
    for client in (anonymous, member):
        assert client.get("/admin/outbox").status_code == 404
        invite = client.post("/admin/invite", data={"email": "x@example.org", "role": "admin",
                                                    "csrf_token": fresh_token(client, "/")})  # fmt: skip
        assert invite.status_code == 404
    assert app.state.repo.user_by_email("x@example.org") is None
    assert all(m["to_addr"] != "x@example.org" for m in app.state.repo.mails())
    assert anonymous.post("/preview", data={"text": "x", "csrf_token": fresh_token(anonymous, "/")}).status_code == 404


def test_every_route_consults_the_policy(app):
    routes = [r for r in app.routes if isinstance(r, APIRoute)]
    assert {(r.path, m) for r in routes for m in r.methods} >= {
        ("/", "GET"), ("/signup", "GET"), ("/signup", "POST"), ("/verify/{token}", "GET"), ("/login", "GET"),
        ("/login", "POST"), ("/logout", "POST"), ("/invite/{token}", "GET"), ("/invite/{token}", "POST"),
        ("/admin/outbox", "GET"), ("/admin/invite", "POST"), ("/preview", "POST"), ("/healthz", "GET")}
    for route in routes:
        actions = [d.call.policy_action for d in route.dependant.dependencies if hasattr(d.call, "policy_action")]
        assert len(actions) == 1, route.path


def test_csp_on_every_page_and_no_inline_script_or_style(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    admin = TestClient(app)
    sign_in(admin, ADMIN)
    token = accounts.invite(app.state.repo, "g@example.org", "grader", by=None)
    anonymous = TestClient(app)
    pages = [anonymous.get(p) for p in ("/", "/signup", "/login", f"/invite/{token}", "/verify/nope", "/missing")]
    pages += [admin.get("/"), admin.get("/admin/outbox")]
    pages.append(anonymous.post("/login", data={"email": "a@b.org", "password": "x"}))  # the CSRF error page
    for response in pages + [anonymous.get("/healthz"), anonymous.get("/static/app.js")]:
        csp = response.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
    for response in pages:
        parsed = parse_tags(response.text)
        scripts = [attrs for tag, attrs in parsed.tags if tag == "script"]
        assert {s["src"] for s in scripts} == {"/static/katex/katex.min.js", "/static/app.js"}
        assert parsed.script_text == []
        assert all("style" not in attrs and not any(k.startswith("on") for k in attrs) for _, attrs in parsed.tags)
        assert all(tag != "style" for tag, _ in parsed.tags)
    assert anonymous.get("/healthz").text == "ok"


def test_katex_and_app_js_are_served_locally(tmp_path):
    katex = tmp_path / "katex"
    (katex / "dist").mkdir(parents=True)
    (katex / "dist" / "katex.min.js").write_text("/* katex */")
    made = create_app(str(tmp_path / "k.db"), static_katex=katex)
    client = TestClient(made)
    assert client.get("/static/katex/katex.min.js").text == "/* katex */"
    js = client.get("/static/app.js").text
    assert "trust: false" in js and "maxExpand" in js and "maxSize" in js and "throwOnError: true" in js and "math-error" in js
    made.state.store.close()


def test_dashboard_counts(app):
    from theorembench.store.improof import ImproofRepo

    repo = ImproofRepo(app.state.store)
    for pid, status in [("p1", "draft"), ("p2", "draft"), ("p3", "active")]:
        repo.create_problem(pid, status=status, author=None, payload={"title": pid}, actor=None)
    accounts.sign_up(app.state.repo, "c1@example.org", PASSWORD)
    page = TestClient(app).get("/").text
    assert 'data-testid="dashboard-contributors">1<' in page
    assert 'data-testid="dashboard-status-draft">2<' in page and 'data-testid="dashboard-status-active">1<' in page
    assert 'data-testid="dashboard-status-under_review">0<' in page and 'data-testid="dashboard-questions">3<' in page


# -- the renderer and its XSS corpus (helpers/web.py) ----------------------------


@pytest.mark.parametrize("text", XSS + NESTED, ids=range(len(XSS + NESTED)))
def test_renderer_never_emits_live_code(text):
    _assert_inert(render_markdown(text))


def test_renderer_keeps_math_as_text_and_safe_links():
    assert render_markdown("Let $a_1 * b_2 < c$ and $$x^2$$.") == (
        '<p>Let <span data-math="inline">a_1 * b_2 &lt; c</span> and <span data-math="display">x^2</span>.</p>\n')
    assert render_markdown(r"\[ \int_0^1 f \]") == '<div data-math="display"> \\int_0^1 f </div>\n'
    assert render_markdown("$<img src=a onerror=alert(1)>%$") == (
        '<p><span data-math="inline">&lt;img src=a onerror=alert(1)&gt;%</span></p>\n')
    assert render_markdown("[ok](https://example.org) [m](mailto:a@b.org)") == (
        '<p><a href="https://example.org" rel="noopener noreferrer nofollow">ok</a> '
        '<a href="mailto:a@b.org" rel="noopener noreferrer nofollow">m</a></p>\n')
    assert render_markdown("[x](javascript:alert(1))") == "<p>[x](javascript:alert(1))</p>\n"
    assert render_markdown(r"\href{javascript:alert(1)}{x}") == "<p>\\href{javascript:alert(1)}{x}</p>\n"
    assert render_markdown("<b>raw</b>") == "<p>&lt;b&gt;raw&lt;/b&gt;</p>\n"


def test_the_xss_corpus_through_preview(app):
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    client = TestClient(app)
    sign_in(client, ADMIN)
    token = csrf_from(client.get("/").text)
    for text in XSS + NESTED:
        response = client.post("/preview", data={"text": text}, headers={"X-CSRF-Token": token})
        assert response.status_code == 200
        assert response.text == render_markdown(text)
        _assert_inert(response.text)
        assert "content-security-policy" in response.headers
    too_long = client.post("/preview", data={"text": "x" * 200_001}, headers={"X-CSRF-Token": token})
    assert too_long.status_code == 413
