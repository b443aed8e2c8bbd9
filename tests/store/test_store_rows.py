"""The repositories' typed rows: every row a repository returns has exactly the keys its TypedDict names."""

from __future__ import annotations

from typing import Any

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import get_problem, import_demo_problems
from theorembench.store import Store
from theorembench.store.accounts import AccountRepo, Mail, Session, Token, User
from theorembench.store.grading import Assignment, Flag, GradingRepo
from theorembench.store.improof import (
    AnswerRow,
    GradeCorrection,
    GradeRow,
    ImproofRepo,
    ProblemRow,
    ProblemVersion,
    ProblemWithPayload,
    StatusEvent,
    VerdictOverride,
    VerdictRow,
)
from theorembench.store.jobs import Job, JobRepo
from theorembench.store.reviews import ListedUser, Review, ReviewRepo, ReviewRow, users_with_roles

Rows = list[tuple[Any, type]]


def check(rows: Rows) -> None:
    """Each row has every required key of its TypedDict and no key the TypedDict does not name."""
    for row, kind in rows:
        assert row is not None, kind.__name__
        keys = set(row)
        assert kind.__required_keys__ <= keys <= set(kind.__annotations__), (kind.__name__, sorted(keys))


def each(found: list[Any], kind: type) -> Rows:
    assert found, f"no {kind.__name__} rows"
    return [(row, kind) for row in found]


def test_improof_rows_have_their_types_keys(store: Store):
    problem_id = import_demo_problems(store)[0]
    problem = get_problem(store, problem_id)
    answer_id = record_answer(store, run_id="r1", problem_id=problem_id, version=problem.version or 1, model="m/x",
                              tier=1, epoch=0, mode="agentic", main_answer="proof",
                              sub_answers=["1"] * len(problem.subquestions),
                              stages=[{"stage": "main", "outcome": "submitted"}])  # fmt: skip
    repo = ImproofRepo(store)
    repo.put_verdicts(answer_id, "checker-test", [{"sub_index": 0, "correct": True, "warning": "none",
                                                   "extracted": "1", "parsed": {"kind": "integer"}}])  # fmt: skip
    repo.add_override(answer_id, 0, correct=False, verified=True, actor="admin", reason="checked by hand")
    grade = {"answer_id": answer_id, "grader": "g@example.org", "progress": 3, "indicators": {"rigour": "high"},
             "notes": "", "comment": "fine", "status": "complete"}  # fmt: skip
    repo.add_grade_correction(grade | {"progress": 4}, repo.save_grade(grade))

    check([(repo.problem(problem_id), ProblemRow), (repo.version(problem_id), ProblemVersion),
           (repo.answer(answer_id), AnswerRow), (repo.grade(answer_id, "g@example.org"), GradeRow),
           *each(repo.problems(), ProblemWithPayload), *each(repo.versions(problem_id), ProblemVersion),
           *each(repo.status_events(problem_id), StatusEvent), *each(repo.answers(run_id="r1"), AnswerRow),
           *each(repo.verdicts(answer_id, "checker-test"), VerdictRow),
           *each(repo.overrides(answer_id), VerdictOverride),
           *each(repo.grades(problem_id=problem_id), GradeRow),
           *each(repo.grade_corrections(answer_id=answer_id), GradeCorrection)])  # fmt: skip


def test_platform_rows_have_their_types_keys(store: Store):
    problem_id = import_demo_problems(store)[0]
    accounts = AccountRepo(store)
    user_id = accounts.create_user("ada@example.org", "hash", verified=True, roles=("grader", "reviewer"))
    accounts.create_session("session-hash", user_id, expires_at=2e9)
    accounts.add_token("token-hash", "invite", "bob@example.org", role="grader", created_by=user_id, expires_at=2e9)
    accounts.add_mail("bob@example.org", "Welcome", "Hello")
    reviews = ReviewRepo(store)
    review_id = reviews.create(problem_id, 1, user_id, invited_by=None)
    grading = GradingRepo(store)
    grading.assign(problem_id, user_id, [{"answer_id": "a1", "alias": "A"}], by=None)
    flag_id = grading.add_flag(problem_id, None, user_id, "typo in the statement")
    jobs = JobRepo(store)
    job_id = jobs.create("harness", user_id, params={"models": ["m/x"]}, timeout_s=60, now=1.0, problem_id=problem_id)
    claimed = jobs.claim("worker-1", lease_s=30, now=2.0)
    assert claimed is not None and jobs.finish(job_id, "worker-1", "done", now=3.0, result={"answers": 1})

    check([(accounts.user(user_id), User), (accounts.user_by_email("ada@example.org"), User),
           (accounts.session("session-hash", now=1.0), Session),
           (accounts.live_token("token-hash", "invite", 1.0), Token),
           *each(accounts.mails(), Mail), (accounts.review_row(review_id), ReviewRow),
           (reviews.get(review_id), Review), *each(reviews.for_problem(problem_id), Review),
           *each(reviews.listing(), Review), *each(users_with_roles(store), ListedUser),
           (grading.assignment(problem_id, user_id), Assignment), *each(grading.assignments(), Assignment),
           (grading.flag(flag_id), Flag), *each(grading.flags(), Flag),
           (claimed, Job), (jobs.get(job_id), Job), *each(jobs.jobs(), Job)])  # fmt: skip
