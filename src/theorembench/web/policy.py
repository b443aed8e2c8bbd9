"""The one authorisation rule of the platform: :func:`allowed`, consulted by every route.

A route names an action. Actions on the whole site are decided from the user's roles alone;
actions on a question also need the user's relationship to it (a :class:`Subject`): its
author, an assigned reviewer, an assigned grader. A denied action answers 404 (the object is
private: its existence is not revealed), except that an anonymous visitor asking for a
members' page is sent to log in.

The relationships the tests walk through every route: anonymous, a contributor, the author,
another author, the assigned reviewer, the assigned grader, another grader, an admin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# -- site actions: roles alone ---------------------------------------------------------------------------------

PUBLIC = frozenset({"dashboard", "healthz", "signup", "login", "logout", "verify", "invite", "guidelines"})
PUBLIC |= {"about", "privacy", "password_reset"}  # the project's pages; asking for and using a reset link
PUBLIC |= {"review_guidelines", "review_invitation"}  # the reviewers' guidelines; an e-mailed review invitation
MEMBERS = frozenset({"preview", "questions", "reviews", "grading_list"})
MEMBERS |= {"profile", "password_change", "contributors"}  # one's own account; the contributor list
AUTHORS = frozenset({"question_new"})
ADMIN = frozenset({
    "admin_outbox", "admin_invite", "admin_evaluations", "admin_eval_launch", "admin_eval_view",
    "admin_verdict", "admin_stats", "admin_export", "admin_grading", "admin_grading_assign", "admin_flags",
    "admin_flag_resolve", "admin_users",
})  # fmt: skip
ADMIN |= {"admin_assign"}  # several questions at once to one reviewer or grader

# -- question actions: roles and the user's relationship to the question -----------------------------------------


@dataclass(frozen=True)
class Subject:
    """A question as the policy sees it: its author, status and who is assigned to it.

    ``reviewers`` are users with a live review invitation (invited, accepted or submitted);
    ``graders`` are users assigned to grade its answers. ``review_owner`` is set when the
    action is on one review: the reviewer it belongs to.
    """

    author: str | None
    status: str
    open_problem: bool = False
    reviewers: frozenset[str] = field(default_factory=frozenset)
    graders: frozenset[str] = field(default_factory=frozenset)
    review_owner: str | None = None


@dataclass(frozen=True)
class Who:
    """One user's standing towards one subject."""

    admin: bool
    author: bool
    reviewer: bool
    grader: bool
    review_owner: bool


Rule = Callable[[Who, Subject], bool]

EDITABLE = ("draft",)
GRADABLE = ("active", "retired")

QUESTION_RULES: dict[str, Rule] = {
    # the question page: author, admins, reviewers invited to it
    "question_view": lambda w, s: w.admin or w.author or w.reviewer,
    # write a new version: the author while it is a draft
    "question_edit": lambda w, s: w.author and s.status in EDITABLE,
    # send a draft for review
    "question_submit": lambda w, s: w.author and s.status == "draft",
    # run a model on the question (a background job): author and admins
    "question_test": lambda w, s: w.admin or w.author,
    # the author's answer to a review
    "question_respond": lambda w, s: w.author,
    # status moves (approve, activate, retire, back to draft, withdraw) and inviting reviewers
    "question_status": lambda w, s: w.admin,
    "review_invite": lambda w, s: w.admin,
    # a reviewer accepts/declines an invitation and submits the review: only their own
    "review_respond": lambda w, s: w.review_owner,
    "review_submit": lambda w, s: w.review_owner and s.status == "under_review",
    # a review's discussion (once submitted) and a further round with its reviewer (while under review)
    "review_discuss": lambda w, s: w.admin or w.author or w.review_owner,
    "review_round": lambda w, s: (w.admin or w.author or w.review_owner) and s.status == "under_review",
    # blind grading, once the question is live: its author (as in the paper) and the graders assigned to it
    "grading_view": lambda w, s: (w.grader or w.author) and s.status in GRADABLE,
    "grading_save": lambda w, s: (w.grader or w.author) and s.status in GRADABLE,
    "grading_flag": lambda w, s: (w.grader or w.author) and s.status in GRADABLE,
    # a background job's page: its owner (the subject's ``author``) and admins
    "job_view": lambda w, s: w.admin or w.author,
}

def roles_of(user: dict[str, Any] | None) -> frozenset[str]:
    return frozenset(user.get("roles") or ()) if user else frozenset()


def allowed(user: dict[str, Any] | None, action: str, obj: Subject | None = None) -> bool:
    """Whether ``user`` (None when anonymous) may do ``action`` (on ``obj`` for question actions).

    Unknown actions are refused, and so is a question action without its subject.
    """
    if action in PUBLIC:
        return True
    if user is None or not user.get("verified"):
        return False
    roles = roles_of(user)
    if action in MEMBERS:
        return True
    if action in AUTHORS:
        return bool(roles & {"contributor", "admin"})
    if action in ADMIN:
        return "admin" in roles
    rule = QUESTION_RULES.get(action)
    if rule is None or obj is None:
        return False
    uid = user.get("id")
    who = Who(admin="admin" in roles, author=obj.author is not None and obj.author == uid,
              reviewer=uid in obj.reviewers, grader=uid in obj.graders,
              review_owner=obj.review_owner is not None and obj.review_owner == uid)  # fmt: skip
    return bool(rule(who, obj))


def signed_in_enough(user: dict[str, Any] | None, action: str) -> bool:
    """The check a route makes before it loads its object: a question action needs a verified user."""
    if action in QUESTION_RULES:
        return user is not None and bool(user.get("verified"))
    return allowed(user, action, None)


def login_first(user: dict[str, Any] | None, action: str) -> bool:
    """A denied anonymous visitor who might be allowed once signed in is sent to the login page.

    Admin pages answer 404 to everyone else, anonymous visitors included. A question page sends
    any anonymous visitor to log in, whether or not the question exists, so nothing is revealed.
    """
    return user is None and (action in MEMBERS or action in AUTHORS or action in QUESTION_RULES)
