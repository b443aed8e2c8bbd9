"""The demo's platform: an admin and a grader account, and the grader assigned to every active question with answers
for human graders (agentic answers of tiers 1–3 or of a model without a tier, such as the embedded one; single-turn
answers are scored on their subquestions only: see :mod:`theorembench.methods.improof.grading_queue`).

:func:`seed_demo_platform` is what ``theorembench demo`` runs after its IMProofBench step, so
that ``theorembench improof serve`` opens on the demo's problems and the embedded model's
answers, ready for blind grading. Passwords are new random ones at every run (the accounts
are kept), so a platform started on another address never has a published password.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from theorembench.methods.improof.catalog import list_problems
from theorembench.methods.improof.grading_queue import left_out_answers
from theorembench.store.accounts import AccountRepo
from theorembench.store.db import Store
from theorembench.web.accounts import create_admin, ensure_account
from theorembench.web.blind import assign, gradable_answers

DEMO_ADMIN = "admin@demo.example"
DEMO_GRADER = "grader@demo.example"


@dataclass
class DemoPlatform:
    admin: tuple[str, str]
    grader: tuple[str, str]
    assigned: dict[str, int] = field(default_factory=dict)  # question id -> answers to grade
    left_out: dict[str, int] = field(default_factory=dict)  # question id -> answers not for human graders


def _password() -> str:
    return "demo-" + secrets.token_urlsafe(12)


def seed_demo_platform(store: Store) -> DemoPlatform:
    """Create (or reset the passwords of) the demo admin and grader; assign the grader to every active question's
    answers for human graders, and count those left out."""
    repo = AccountRepo(store)
    admin_password, grader_password = _password(), _password()
    admin_id = create_admin(repo, DEMO_ADMIN, admin_password)
    grader_id = ensure_account(repo, DEMO_GRADER, grader_password, "grader", granted_by=admin_id)
    assigned, left_out = {}, {}
    for problem in list_problems(store, status="active"):
        if gradable_answers(store, problem["id"]):
            assigned[problem["id"]] = len(assign(store, problem["id"], grader_id, by=admin_id))
        if skipped := left_out_answers(store, problem["id"]):
            left_out[problem["id"]] = len(skipped)
    return DemoPlatform((DEMO_ADMIN, admin_password), (DEMO_GRADER, grader_password), assigned, left_out)
