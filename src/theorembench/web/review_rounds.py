"""Review rounds: the discussion between a question's author and its reviewers, and further rounds with a reviewer.

Each review (one row of ``web_reviews``) is one round; a reviewer's rounds on a question are their reviews of it
that were not declined, in order. The author never learns a reviewer's identity from a discussion: reviewers are
numbered per question ("Reviewer 1", "Reviewer 2", … in the order of their first submitted review, so a number
never changes once the author has seen it), and only a reviewer who signed their review is also named. A message
is written by one side (the author, the reviewer, or an administrator), stored with it.

A further round (:func:`start_round`) asks the same reviewer to review the question's current version: after the
author revised it, or after the discussion. It needs their last round submitted and the question under review;
the new round is already accepted (the reviewer agreed to review this question), and its page shows what changed
since the version of the previous round (:mod:`theorembench.web.version_diff`).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import Response

from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo
from theorembench.store.review_rounds import Message, MessageRepo
from theorembench.store.reviews import Review, ReviewRepo
from theorembench.web.context import Ctx, PageError, guard, redirect
from theorembench.web.outbox import send_mail
from theorembench.web.render import MAX_CHARS
from theorembench.web.version_diff import diff_rows

SIDES = ("author", "reviewer", "admin")


class ReviewError(ValueError):
    """A review action that cannot be done (one line, safe to show)."""


# -- numbering -------------------------------------------------------------------------------------------------


def reviewer_labels(reviews: list[Review]) -> dict[str, str]:
    """Reviewer id → "Reviewer N" for a question's reviews: numbered by first submitted review, then invitation."""
    first: dict[str, tuple[float, int]] = {}
    for review in reviews:
        key = (review["submitted_at"] if review["state"] == "submitted" else float("inf"), review["id"])
        first[review["reviewer_id"]] = min(first.get(review["reviewer_id"], key), key)
    ordered = sorted(first, key=lambda rid: first[rid])
    return {reviewer: f"Reviewer {n}" for n, reviewer in enumerate(ordered, start=1)}


def round_numbers(reviews: list[Review]) -> dict[int, int]:
    """Review id → its round (1, 2, …) among its reviewer's reviews of the question that were not declined."""
    seen: dict[str, int] = {}
    out = {}
    for review in sorted(reviews, key=lambda r: r["id"]):
        if review["state"] != "declined":
            seen[review["reviewer_id"]] = seen.get(review["reviewer_id"], 0) + 1
            out[review["id"]] = seen[review["reviewer_id"]]
    return out


def previous_round(reviews: list[Review], review: Review) -> Review | None:
    """The same reviewer's round before ``review`` (not declined), or None for a first round."""
    earlier = [r for r in reviews if r["reviewer_id"] == review["reviewer_id"] and r["id"] < review["id"]
               and r["state"] != "declined"]  # fmt: skip
    return max(earlier, key=lambda r: r["id"]) if earlier else None


def latest_round(reviews: list[Review], reviewer_id: str) -> Review | None:
    mine = [r for r in reviews if r["reviewer_id"] == reviewer_id and r["state"] != "declined"]
    return max(mine, key=lambda r: r["id"]) if mine else None


# -- the discussion --------------------------------------------------------------------------------------------


def side_of(user: dict[str, Any], review: Review, author_id: str | None) -> str:
    """How a message by ``user`` on ``review`` is labelled: its reviewer, the question's author, or an admin."""
    if user["id"] == review["reviewer_id"]:
        return "reviewer"
    if author_id is not None and user["id"] == author_id:
        return "author"
    if "admin" in (user.get("roles") or ()):
        return "admin"
    raise ReviewError("only the author, the reviewer and administrators take part in a review's discussion")


def post_message(store: Store, review_id: int, user: dict[str, Any], body: str) -> tuple[int, str]:
    """Add ``user``'s message to a submitted review's discussion; returns (message id, the writer's side)."""
    if not body.strip():
        raise ReviewError("write a message first")
    if len(body) > MAX_CHARS:
        raise ReviewError(f"a message may have at most {MAX_CHARS} characters")
    review = ReviewRepo(store).get(review_id)
    problem = ImproofRepo(store).problem(review["problem_id"]) if review else None
    if review is None or problem is None:
        raise ReviewError(f"no review {review_id}")
    if review["state"] != "submitted":
        raise ReviewError("the discussion opens once the review is submitted")
    side = side_of(user, review, problem["author"])
    return MessageRepo(store).add(review_id, user["id"], side, body), side


def thread(messages: list[Message], review: Review, label: str, *, viewer: str | None,
           admin: bool) -> list[dict[str, Any]]:  # fmt: skip
    """A review's messages as a page shows them: who wrote each ("Author", "Reviewer 1", "Administrator"); the
    reviewer is named only to admins, to themselves, and when the review is signed."""
    named = admin or not review["anonymous"]
    out = []
    for message in messages:
        side = message["side"]
        if side == "reviewer":
            who = "You" if viewer == review["reviewer_id"] else label
            if named and viewer != review["reviewer_id"]:
                who = f"{label} ({review['reviewer_email']})"
        elif side == "author":
            who = "You (author)" if viewer == message["author_id"] else "Author"
        else:
            who = "Administrator"
        out.append({"id": message["id"], "side": side, "who": who, "body": message["body"],
                    "created_at": message["created_at"]})  # fmt: skip
    return out


# -- further rounds --------------------------------------------------------------------------------------------


def round_blocker(reviews: list[Review], review: Review, status: str) -> str | None:
    """Why no further round can start from ``review`` (one line), or None when it can."""
    if status != "under_review":
        return "a further round starts once the question is under review again"
    if latest_round(reviews, review["reviewer_id"]) != review:
        return "this reviewer already has a later round"
    if review["state"] != "submitted":
        return "a further round starts once this round's review is submitted"
    return None


def start_round(store: Store, review_id: int, *, by: str | None) -> int:
    """A further round with the reviewer of ``review_id`` on the question's current version; the new review id."""
    reviews = ReviewRepo(store)
    review = reviews.get(review_id)
    problem = ImproofRepo(store).problem(review["problem_id"]) if review else None
    if review is None or problem is None:
        raise ReviewError(f"no review {review_id}")
    with store.transaction():
        found = reviews.for_problem(review["problem_id"])
        blocker = round_blocker(found, next(r for r in found if r["id"] == review_id), problem["status"])
        if blocker:
            raise ReviewError(blocker)
        return reviews.create(review["problem_id"], int(problem["current_version"]), review["reviewer_id"], by,
                              state="accepted", anonymous=bool(review["anonymous"]))  # fmt: skip


def changes_since_previous(store: Store, reviews: list[Review], review: Review) -> dict[str, Any] | None:
    """For a further round: the previous round's version, this one's, and the diff rows between them (None for a
    first round)."""
    before = previous_round(reviews, review)
    if before is None:
        return None
    repo = ImproofRepo(store)
    old, new = repo.version(review["problem_id"], before["version"]), repo.version(review["problem_id"],
                                                                                   review["version"])  # fmt: skip
    rows = diff_rows(old["payload"], new["payload"]) if old and new and before["version"] != review["version"] else []
    return {"from_version": before["version"], "to_version": review["version"], "rows": rows}


# -- routes ----------------------------------------------------------------------------------------------------


def _rid(text: str) -> int:
    if not text.isdigit() or len(text) > 18:
        raise PageError(404, "Not found", "There is no such page.")
    return int(text)


def _title(problem: dict[str, Any]) -> str:
    return str(problem["payload"].get("title") or problem["id"])


def register(app: FastAPI) -> None:
    """Add the discussion and further-round routes to ``app``."""

    def mail(ctx: Ctx, to: str, subject: str, body: str) -> None:
        send_mail(ctx.repo, to, subject, body, ctx.request.app.state.smtp_url)

    @app.post("/questions/{pid}/reviews/{rid}/messages")
    def review_message(pid: str, rid: str, ctx: Ctx = guard("review_discuss")) -> Response:
        number = _rid(rid)
        problem, _ = ctx.question(pid, review_id=number)
        try:
            _, side = post_message(ctx.repo.store, number, ctx.user, ctx.form.get("message", ""))
        except ReviewError as exc:
            raise PageError(400, "Message not sent", f"{exc}.") from None
        review = ReviewRepo(ctx.repo.store).get(number)
        base, title = ctx.base_url(), _title(problem)
        author = ctx.repo.user(problem["author"]) if problem["author"] else None
        if side != "reviewer":
            mail(ctx, review["reviewer_email"], "IMProofBench: a new message on your review",
                 f"There is a new message on your review of \"{title}\":\n{base}/questions/{pid}/reviews/{number}\n")
        if side != "author" and author is not None:
            mail(ctx, author["email"], "IMProofBench: a new message on a review of your question",
                 f"There is a new message on a review of \"{title}\":\n{base}/questions/{pid}#review-{number}\n")
        if side == "reviewer":
            return redirect(ctx, f"/questions/{pid}/reviews/{number}#discussion")
        return redirect(ctx, f"/questions/{pid}#review-{number}")

    @app.post("/questions/{pid}/reviews/{rid}/round")
    def review_round(pid: str, rid: str, ctx: Ctx = guard("review_round")) -> Response:
        number = _rid(rid)
        problem, _ = ctx.question(pid, review_id=number)
        try:
            new = start_round(ctx.repo.store, number, by=ctx.uid)
        except ReviewError as exc:
            raise PageError(400, "No further round", f"{exc}.") from None
        review = ReviewRepo(ctx.repo.store).get(new)
        if review["reviewer_id"] != ctx.uid:
            mail(ctx, review["reviewer_email"], "IMProofBench: a further round of your review",
                 f"You are asked to review version {review['version']} of \"{_title(problem)}\" again; the review "
                 f"page shows what changed since your last round:\n"
                 f"{ctx.base_url()}/questions/{pid}/reviews/{new}\n")  # fmt: skip
            return redirect(ctx, f"/questions/{pid}#review-{new}")
        return redirect(ctx, f"/questions/{pid}/reviews/{new}")
