"""The project's pages: About, the privacy policy, and the list of contributors.

Routes: ``GET /about`` (about), ``GET /privacy`` (privacy), ``GET /contributors`` (contributors).

Contributors, as the paper's community page has them: every author of an accepted question (approved, active
or retired: it passed review), ordered by the number of accepted questions. The platform stores no names, so a
contributor is shown by the part of their e-mail address before the "@" (or the author name an imported question
carries); the list is for signed-in members only, and the privacy page says so.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from theorembench.store.improof import ImproofRepo
from theorembench.web.account_pages import ACCEPTED
from theorembench.web.context import Ctx, guard, page


def _shown_name(author: str, emails: dict[str, str]) -> str:
    """A contributor's public name: the e-mail's local part, never the full address."""
    text = emails.get(author, author)
    return text.split("@", 1)[0] if "@" in text else text


def contributors(ctx: Ctx) -> list[dict[str, Any]]:
    """Authors of accepted questions, most accepted questions first (ties by name)."""
    counts = Counter(p["author"] for p in ImproofRepo(ctx.repo.store).problems()
                     if p["status"] in ACCEPTED and p["author"])  # fmt: skip
    emails = {}
    for author in counts:
        user = ctx.repo.user(author)
        if user is not None:
            emails[author] = user["email"]
    rows = [{"name": _shown_name(a, emails), "accepted": n, "me": a == ctx.uid} for a, n in counts.items()]
    return sorted(rows, key=lambda r: (-r["accepted"], r["name"].lower()))


def register(app: FastAPI) -> None:
    """Add the project's pages to ``app``."""

    @app.get("/about", response_class=HTMLResponse)
    def about(ctx: Ctx = guard("about")) -> HTMLResponse:
        return page(ctx, "about.html")

    @app.get("/privacy", response_class=HTMLResponse)
    def privacy(ctx: Ctx = guard("privacy")) -> HTMLResponse:
        return page(ctx, "privacy.html")

    @app.get("/contributors", response_class=HTMLResponse)
    def contributor_list(ctx: Ctx = guard("contributors")) -> HTMLResponse:
        return page(ctx, "contributors.html", contributors=contributors(ctx))
