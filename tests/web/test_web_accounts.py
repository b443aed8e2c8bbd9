"""Accounts: the profile page, the password change, the password reset by e-mail (outbox, one-time expiring token,
sessions ended, rate-limited, no account revealed), the contributor list, and the About and privacy pages."""

from __future__ import annotations

import re
import time

import sqlalchemy as sa
from fastapi.testclient import TestClient
from helpers.web import PASSWORD, fresh_token, post_form, sign_in, signed_in

from theorembench.methods.improof.catalog import save_version, set_status
from theorembench.methods.improof.problems import Problem
from theorembench.store.schema import web_tokens
from theorembench.web import accounts
from theorembench.web.auth import hash_password
from theorembench.web.ratelimit import Limit

ADA, BOB, ADMIN = "ada@example.org", "bob@math.example.org", "admin@example.org"
NEW_PASSWORD = "a new password 2"


def _link(app, to: str) -> str:
    [mail] = [m for m in app.state.repo.mails() if m["to_addr"] == to and "reset" in m["subject"]]
    return re.search(r"http://testserver(/reset/\S+)", mail["body"]).group(1)


def _reset_mails(app) -> list[str]:
    return [m["to_addr"] for m in app.state.repo.mails() if "reset" in m["subject"]]


def test_the_profile_shows_the_account_and_a_password_change_needs_the_current_one(any_app):
    repo = any_app.state.repo
    repo.create_user(ADA, hash_password(PASSWORD), verified=True, roles=("contributor", "grader"))
    ada, elsewhere = signed_in(any_app, ADA), signed_in(any_app, ADA)
    page = ada.get("/profile").text
    assert 'data-testid="profile-email">ada@example.org<' in page
    assert 'data-testid="profile-roles">contributor, grader<' in page
    assert f'data-testid="profile-since">{time.strftime("%Y-%m-%d", time.gmtime())}<' in page
    assert 'data-testid="profile-questions">0 written, 0 accepted<' in page
    assert 'href="/profile" data-testid="nav-user"' in page

    wrong = post_form(ada, "/profile/password", {"current_password": "not it at all", "new_password": NEW_PASSWORD,
                                                 "new_password_again": NEW_PASSWORD})  # fmt: skip
    assert wrong.status_code == 400 and "The current password is wrong." in wrong.text
    differ = post_form(ada, "/profile/password", {"current_password": PASSWORD, "new_password": NEW_PASSWORD,
                                                  "new_password_again": NEW_PASSWORD + "x"})  # fmt: skip
    assert differ.status_code == 400 and "The two new passwords differ" in differ.text
    short = post_form(ada, "/profile/password", {"current_password": PASSWORD, "new_password": "short",
                                                 "new_password_again": "short"})  # fmt: skip
    assert short.status_code == 400 and "at least 8 characters" in short.text
    assert sign_in(TestClient(any_app), ADA, PASSWORD).status_code == 303  # nothing changed yet

    done = post_form(ada, "/profile/password", {"current_password": PASSWORD, "new_password": NEW_PASSWORD,
                                                "new_password_again": NEW_PASSWORD})  # fmt: skip
    assert done.status_code == 303 and done.headers["location"] == "/profile?changed=1"
    assert 'data-testid="password-changed"' in ada.get("/profile?changed=1").text  # this browser stays signed in
    assert elsewhere.get("/profile", follow_redirects=False).headers["location"] == "/login"  # the other is not
    assert sign_in(TestClient(any_app), ADA, PASSWORD).status_code == 401
    assert sign_in(TestClient(any_app), ADA, NEW_PASSWORD).status_code == 303
    assert TestClient(any_app).get("/profile", follow_redirects=False).headers["location"] == "/login"


def test_a_password_reset_mails_a_one_time_link_and_ends_every_session(any_app):
    repo = any_app.state.repo
    ada_id = repo.create_user(ADA, hash_password(PASSWORD), verified=True, roles=("contributor",))
    signed = signed_in(any_app, ADA)
    visitor = TestClient(any_app)
    assert 'href="/reset"' in visitor.get("/login").text
    asked = visitor.post("/reset", data={"email": " Ada@Example.org ", "csrf_token": fresh_token(visitor, "/reset")})
    unknown = visitor.post("/reset", data={"email": "nobody@example.org",
                                           "csrf_token": fresh_token(visitor, "/reset")})  # fmt: skip
    assert asked.status_code == unknown.status_code == 200
    # the same sentence for an address with an account and for one without
    assert asked.text.replace(ADA, "X") == unknown.text.replace("nobody@example.org", "X")
    assert _reset_mails(any_app) == [ADA]  # only the account's owner got a mail
    bad = visitor.post("/reset", data={"email": "not an address", "csrf_token": fresh_token(visitor, "/reset")})
    assert bad.status_code == 400 and "Enter a valid e-mail address" in bad.text

    link = _link(any_app, ADA)
    token = link.removeprefix("/reset/")
    [row] = repo.store._rows(sa.select(web_tokens.c.kind, web_tokens.c.token_hash, web_tokens.c.expires_at)
                             .where(web_tokens.c.email == ADA))  # fmt: skip
    assert row[0] == "password_reset" and row[1] != token  # only the digest is stored
    assert 3500 < row[2] - time.time() <= 3600  # an hour

    assert 'data-testid="reset-password-form"' in visitor.get(link).text
    differ = visitor.post(link, data={"new_password": NEW_PASSWORD, "new_password_again": "something else 1",
                                      "csrf_token": fresh_token(visitor, "/reset")})  # fmt: skip
    assert differ.status_code == 400 and "differ" in differ.text
    done = visitor.post(link, data={"new_password": NEW_PASSWORD, "new_password_again": NEW_PASSWORD,
                                    "csrf_token": fresh_token(visitor, "/reset")})  # fmt: skip
    assert done.status_code == 200 and 'data-testid="reset-done"' in done.text
    assert signed.get("/profile", follow_redirects=False).headers["location"] == "/login"  # sessions ended
    assert repo.delete_user_sessions(ada_id) == 0
    assert sign_in(TestClient(any_app), ADA, PASSWORD).status_code == 401
    assert sign_in(TestClient(any_app), ADA, NEW_PASSWORD).status_code == 303
    # once only
    assert visitor.get(link).status_code == 404
    again = visitor.post(link, data={"new_password": "third password 3", "new_password_again": "third password 3",
                                     "csrf_token": fresh_token(visitor, "/reset")})  # fmt: skip
    assert again.status_code == 404
    assert sign_in(TestClient(any_app), ADA, NEW_PASSWORD).status_code == 303


def test_a_reset_link_expires(any_app):
    repo = any_app.state.repo
    repo.create_user(ADA, hash_password(PASSWORD), verified=True, roles=("contributor",))
    _address, token = accounts.request_password_reset(repo, ADA, now=time.time() - 3601)
    visitor = TestClient(any_app)
    assert visitor.get(f"/reset/{token}").status_code == 404
    late = visitor.post(f"/reset/{token}", data={"new_password": NEW_PASSWORD, "new_password_again": NEW_PASSWORD,
                                                 "csrf_token": fresh_token(visitor, "/reset")})  # fmt: skip
    assert late.status_code == 404 and "expired" in late.text
    assert sign_in(TestClient(any_app), ADA, PASSWORD).status_code == 303


def test_reset_requests_are_rate_limited_per_address_the_same_with_or_without_an_account(any_app):
    any_app.state.limits["reset"] = Limit(limit=2, window_s=600)
    any_app.state.repo.create_user(ADA, hash_password(PASSWORD), verified=True, roles=("contributor",))
    for email in (ADA, "nobody@example.org"):
        client = TestClient(any_app)
        codes = [client.post("/reset", data={"email": email, "csrf_token": fresh_token(client, "/reset")}).status_code
                 for _ in range(3)]  # fmt: skip
        assert codes[:2] == [200, 200] and codes[2] == 429
        any_app.state.store._execute(sa.text("DELETE FROM web_rate_limits"))
    assert _reset_mails(any_app) == [ADA, ADA]


def _accept(store, pid: str, author: str, admin: str, status: str = "active") -> None:
    save_version(store, Problem(id=pid, title=pid, statement="Show it.", solution="Done.", author=author,
                                difficulty={"background": 1, "reasoning": 1, "insight": 1, "compute": 1},
                                subquestions=[{"text": "n?", "answer": "2", "kind": "integer"}]), actor=author)  # fmt: skip
    store._execute(sa.text("UPDATE improof_problems SET author = :a WHERE id = :p"), {"a": author, "p": pid})
    path = {"draft": [], "under_review": ["under_review"], "approved": ["under_review", "approved"],
            "active": ["under_review", "approved", "active"]}[status]  # fmt: skip
    for to in path:
        set_status(store, pid, to, actor=admin)


def test_contributors_are_the_authors_of_accepted_questions_most_first_without_their_addresses(any_app):
    repo, store = any_app.state.repo, any_app.state.store
    admin = accounts.create_admin(repo, ADMIN, PASSWORD)
    ada = repo.create_user(ADA, hash_password(PASSWORD), verified=True, roles=("contributor",))
    bob = repo.create_user(BOB, hash_password(PASSWORD), verified=True, roles=("contributor",))
    carol = repo.create_user("carol@example.org", hash_password(PASSWORD), verified=True, roles=("contributor",))
    _accept(store, "q1", ada, admin)
    _accept(store, "q2", bob, admin)
    _accept(store, "q3", bob, admin, status="approved")
    _accept(store, "q4", ada, admin, status="under_review")  # not accepted
    _accept(store, "q5", carol, admin, status="draft")  # carol has nothing accepted
    member = signed_in(any_app, ADA)
    page = member.get("/contributors").text
    names = [p.split("<")[0] for p in page.split('data-testid="contributor-name">')[1:]]
    counts = [p.split("<")[0] for p in page.split('data-testid="contributor-accepted">')[1:]]
    assert names == ["bob", "ada (you)"] and counts == ["2", "1"]
    assert "@example.org" not in page.split("<main>")[1].split("</main>")[0]  # no address in the list
    assert TestClient(any_app).get("/contributors", follow_redirects=False).headers["location"] == "/login"
    assert 'data-testid="profile-questions">2 written, 1 accepted<' in member.get("/profile").text


def test_about_and_privacy_are_public_and_linked_in_the_footer(any_app):
    visitor = TestClient(any_app)
    home = visitor.get("/").text
    for path in ("/about", "/guidelines", "/contributors", "/privacy"):
        assert f'href="{path}"' in home.split('data-testid="site-footer"')[1]
    about = visitor.get("/about")
    assert about.status_code == 200 and 'data-testid="about-faq"' in about.text and "whitepaper" in about.text
    privacy = visitor.get("/privacy")
    assert privacy.status_code == 200 and "hash of" in privacy.text and 'data-testid="privacy-data"' in privacy.text
