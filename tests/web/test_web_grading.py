"""Blind grading on the platform: per-grader alias orders, autosave with optimistic locking, the reveal, flags, leaks."""

from __future__ import annotations

import csv
import io
import json
import random
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers.web import PASSWORD, csrf_from, signed_in

from theorembench.common.errors import UserError
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import import_problems
from theorembench.methods.improof.grades import INDICATORS, get_grade, import_grades, list_corrections
from theorembench.store.grading import GradingRepo
from theorembench.web import accounts, blind
from theorembench.web.auth import hash_password

ADMIN = "admin@example.org"
G1, G2 = "grader.one@example.org", "grader.two@example.org"
MODELS = ("openai-api/zebraco/zebra-secret-model", "anthropic/quokkaco/quokka-hidden-9")
PROBLEM = """\
id: {pid}
title: Sums of squares
statement: "Show that $n^2 \\\\ge n$ for every integer $n$."
solution: "Both sides agree at 0 and 1; otherwise $|n| \\\\ge 2$."
tags: [{tags}]
difficulty: {{background: 1, reasoning: 2, insight: 1, compute: 1}}
status: active
subquestions:
  - text: "What is 3 squared?"
    answer: "9"
    kind: integer
"""
ALL_TRUE = json.dumps({name: "true" for name in INDICATORS})


class Scripted:
    """A stand-in RNG: ``shuffle`` applies a fixed permutation (list of positions); ``sample`` hands out the given
    names, else the first names of the pool (A, B, …, so that the permutation alone decides who is A). The pools
    it was asked to draw from are kept in ``pools``."""

    def __init__(self, perm: list[int] | None = None, names: list[str] | None = None):
        self.perm, self.names = perm, list(names or [])
        self.pools: list[list[str]] = []

    def shuffle(self, x: list[Any]) -> None:
        if self.perm is not None:
            x[:] = [x[i] for i in self.perm]

    def sample(self, population: list[str], k: int) -> list[str]:
        self.pools.append(list(population))
        if not self.names:
            return list(population[:k])
        taken, self.names = self.names[:k], self.names[k:]
        assert all(name in population for name in taken)
        return taken


def _problem(app, tmp_path, pid: str = "squares", *, open_problem: bool = False) -> str:
    path = tmp_path / f"{pid}.yaml"
    path.write_text(PROBLEM.format(pid=pid, tags='"open problem"' if open_problem else ""))
    import_problems(app.state.store, path)
    return pid


def _answer(app, pid: str, n: int, model: str | None = None, *, run: str = "run-secret-kangaroo",
            mode: str = "agentic") -> str:  # fmt: skip
    stages = [{"stage": "main", "outcome": "submitted", "tokens": 918273 + n, "tool_calls": {"python": 77}, "turns": 5}]
    return record_answer(app.state.store, run_id=run, problem_id=pid, version=1, model=model or f"prov/m{n}",
                         tier=2, epoch=0, mode=mode, main_answer=f"Proof text number {n}.", sub_answers=["9"],
                         stages=stages)  # fmt: skip


def _users(app) -> dict[str, str]:
    repo = app.state.repo
    ids = {ADMIN: accounts.create_admin(repo, ADMIN, PASSWORD)}
    for email in (G1, G2):
        ids[email] = repo.create_user(email, hash_password(PASSWORD), verified=True, roles=("grader",))
    return ids


def _save(client: TestClient, pid: str, alias: str, revision: int, **fields: str):
    token = csrf_from(client.get("/grade").text)
    body = {"progress": "", "indicators": "{}", "comment": "", "status": "incomplete", "revision": str(revision)}
    return client.post(f"/grade/{pid}/{alias}", json=body | fields, headers={"X-CSRF-Token": token})


def _order(app, pid: str, uid: str) -> list[tuple[str, str]]:
    return [(e["alias"], e["answer_id"]) for e in GradingRepo(app.state.store).assignment(pid, uid)["answer_order"]]



# -- assignment: per-grader orders, refresh -----------------------------------------------------------------------


def test_each_grader_gets_their_own_order_and_a_refresh_keeps_it(app, tmp_path):
    pid = _problem(app, tmp_path)
    ids = _users(app)
    a = [_answer(app, pid, n) for n in range(6)]
    store = app.state.store
    blind.assign(store, pid, ids[G1], rng=Scripted([0, 1, 2, 3, 4, 5]))
    blind.assign(store, pid, ids[G2], rng=Scripted([5, 4, 3, 2, 1, 0]))
    assert _order(app, pid, ids[G1]) == [("A", a[0]), ("B", a[1]), ("C", a[2]), ("D", a[3]), ("E", a[4]),
                                         ("F", a[5])]  # fmt: skip
    assert _order(app, pid, ids[G2]) == [("A", a[5]), ("B", a[4]), ("C", a[3]), ("D", a[2]), ("E", a[1]),
                                         ("F", a[0])]  # fmt: skip
    one, two = signed_in(app, G1), signed_in(app, G2)
    assert "Proof text number 0." in one.get(f"/grade/{pid}?answer=A").text
    assert "Proof text number 5." in two.get(f"/grade/{pid}?answer=A").text

    # two new answers, and a newer run of an answer already assigned (same model, mode, epoch): not added twice;
    # the new ones draw from the names still unused, and the page lists every answer by name
    new = [_answer(app, pid, 6), _answer(app, pid, 7)]
    _answer(app, pid, 0, run="run-later")
    rng = Scripted([1, 0], names=["Q", "H"])  # a[7] gets Q, a[6] gets H
    blind.assign(store, pid, ids[G1], rng=rng)
    assert rng.pools == [list("GHIJKLMNOPQRSTUVWXYZ")]
    assert _order(app, pid, ids[G1]) == [("A", a[0]), ("B", a[1]), ("C", a[2]), ("D", a[3]), ("E", a[4]),
                                         ("F", a[5]), ("H", new[0]), ("Q", new[1])]  # fmt: skip


def test_admin_assigns_graders_only_with_the_grader_role(app, tmp_path):
    pid = _problem(app, tmp_path)
    _users(app)
    app.state.repo.create_user("author@example.org", hash_password(PASSWORD), verified=True, roles=("contributor",))
    answers = [_answer(app, pid, n) for n in range(3)]
    app.state.grading_rng = Scripted([2, 0, 1])
    admin = signed_in(app, ADMIN)
    token = csrf_from(admin.get("/admin/grading").text)
    refused = admin.post("/admin/grading", data={"problem_id": pid, "email": "author@example.org",
                                                 "csrf_token": token})  # fmt: skip
    assert refused.status_code == 400 and "grader role" in refused.text
    done = admin.post("/admin/grading", data={"problem_id": pid, "email": G1, "csrf_token": token},
                      follow_redirects=False)  # fmt: skip
    assert done.status_code == 303
    uid = app.state.repo.user_by_email(G1)["id"]
    assert _order(app, pid, uid) == [("A", answers[2]), ("B", answers[0]), ("C", answers[1])]
    page = admin.get("/admin/grading").text
    assert f"{G1}: 0 / 3" in page and 'data-testid="admin-grading-answers-squares">3<' in page
    # only assigned graders reach the page: not the admin, not another grader
    assert admin.get(f"/grade/{pid}").status_code == 404
    assert signed_in(app, G2).get(f"/grade/{pid}").status_code == 404
    assert signed_in(app, G1).get(f"/grade/{pid}").status_code == 200


# -- autosave: JSON round trip, stale revisions ---------------------------------------------------------------------


def test_autosave_round_trip_and_a_stale_revision_is_refused(any_app, tmp_path):
    app = any_app
    pid = _problem(app, tmp_path)
    ids = _users(app)
    (a0,) = [_answer(app, pid, 0)]
    blind.assign(app.state.store, pid, ids[G1], rng=Scripted())
    client = signed_in(app, G1)
    first = _save(client, pid, "A", 0, progress="2", indicators=json.dumps({"insight": "not_sure"}),
                  comment="Nice idea, weak end.")  # fmt: skip
    assert first.status_code == 200 and first.json()["revision"] == 1
    page = client.get(f"/grade/{pid}?answer=A").text
    assert 'value="2" data-testid="grade-progress-2" checked' in page
    assert 'value="not_sure" data-testid="indicator-insight-not_sure" checked' in page
    assert "Nice idea, weak end." in page and 'data-save-url="/grade/squares/A" data-revision="1"' in page

    stale = _save(client, pid, "A", 0, progress="0", comment="overwrite attempt")
    assert stale.status_code == 409
    assert stale.json()["current"] == {"progress": 2, "indicators": {"insight": "not_sure"},
                                       "comment": "Nice idea, weak end.", "status": "incomplete", "revision": 1}
    stored = get_grade(app.state.store, a0, G1)
    assert (stored.progress, stored.comment, stored.revision) == (2, "Nice idea, weak end.", 1)

    second = _save(client, pid, "A", 1, progress="3", indicators=ALL_TRUE, status="complete")
    assert second.status_code == 200
    assert second.json() == {"revision": 2, "status": "complete", "all_final": True, "correction": False,
                             "final": True, "graded": 1, "to_grade": 1}  # fmt: skip
    incomplete = _save(client, pid, "A", 2, status="complete")  # a complete grade needs every field
    assert incomplete.status_code == 200 and incomplete.json()["status"] == "incomplete"
    assert incomplete.json()["missing"][0] == {"name": "progress", "label": "Overall progress"}
    assert get_grade(app.state.store, a0, G1).revision == 3

    token = csrf_from(client.get("/grade").text)
    notes = client.post(f"/grade/{pid}/notes", json={"notes": "Matrix slips count as Calculation.", "revision": 1},
                        headers={"X-CSRF-Token": token})  # fmt: skip
    assert notes.status_code == 200 and notes.json() == {"revision": 2}
    again = client.post(f"/grade/{pid}/notes", json={"notes": "lost", "revision": 1}, headers={"X-CSRF-Token": token})
    assert again.status_code == 409
    assert again.json()["current"] == {"notes": "Matrix slips count as Calculation.", "revision": 2}
    assert GradingRepo(app.state.store).assignment(pid, ids[G1])["notes"] == "Matrix slips count as Calculation."
    no_token = client.post(f"/grade/{pid}/notes", json={"notes": "x", "revision": 2})
    assert no_token.status_code == 403


def test_complete_too_early_saves_what_was_given_and_names_the_missing_fields(app, tmp_path):
    pid = _problem(app, tmp_path)
    ids = _users(app)
    a0 = _answer(app, pid, 0)
    blind.assign(app.state.store, pid, ids[G1], rng=Scripted())
    client = signed_in(app, G1)
    given = json.dumps({"hallucinated": "false", "insight": "true"})
    early = _save(client, pid, "A", 0, progress="1", indicators=given, comment="Long comment typed first.",
                  status="complete")  # fmt: skip
    assert early.status_code == 200
    body = early.json()
    assert (body["revision"], body["status"]) == (1, "incomplete")
    labels = ["Incorrect Logic", "Calculation", "Conceptual", "Understanding", "Correct Result", "Usefulness"]
    assert [m["label"] for m in body["missing"]] == labels
    assert [m["name"] for m in body["missing"]][:2] == ["incorrect_logic", "calculation"]
    assert body["message"] == "Saved, but not yet complete: fill in " + ", ".join(labels) + "."
    assert "incorrect_logic" not in body["message"]
    stored = get_grade(app.state.store, a0, G1)
    assert (stored.progress, stored.comment, stored.status) == (1, "Long comment typed first.", "incomplete")
    assert stored.indicators == {"hallucinated": "false", "insight": "true"}
    done = _save(client, pid, "A", 1, progress="1", indicators=ALL_TRUE, status="complete")
    assert done.status_code == 200 and done.json()["status"] == "complete" and "missing" not in done.json()


def test_na_for_correct_result_only_on_open_problems(app, tmp_path):
    closed = _problem(app, tmp_path, "closed-one")
    opened = _problem(app, tmp_path, "open-one", open_problem=True)
    ids = _users(app)
    for pid in (closed, opened):
        _answer(app, pid, 0)
        blind.assign(app.state.store, pid, ids[G1], rng=Scripted())
    client = signed_in(app, G1)
    na = json.dumps({"correct_result": "na"})
    refused = _save(client, closed, "A", 0, indicators=na)
    assert refused.status_code == 400 and refused.json() == {"error": "N/A for Correct Result is only for open problems"}
    assert 'data-testid="indicator-correct_result-na"' not in client.get(f"/grade/{closed}").text
    assert _save(client, opened, "A", 0, indicators=na).status_code == 200
    assert 'value="na" data-testid="indicator-correct_result-na" checked' in client.get(f"/grade/{opened}").text
    assert _save(client, opened, "A", 1, indicators=json.dumps({"insight": "na"})).status_code == 400


# -- the reveal, and grades kept per grader --------------------------------------------------------------------------


def test_reveal_after_all_final_only_for_that_grader(app, tmp_path):
    pid = _problem(app, tmp_path)
    ids = _users(app)
    _answer(app, pid, 0, MODELS[0])
    _answer(app, pid, 1, MODELS[1])
    for uid in (ids[G1], ids[G2]):
        blind.assign(app.state.store, pid, uid, rng=Scripted())
    one, two = signed_in(app, G1), signed_in(app, G2)
    done = _save(one, pid, "A", 0, progress="1", indicators=ALL_TRUE, status="complete", comment="grader one only")
    assert done.json()["all_final"] is False
    assert 'data-testid="reveal"' not in one.get(f"/grade/{pid}").text
    last = _save(one, pid, "B", 0, status="given_up", comment="Only the statement is repeated.")
    assert last.json() == {"revision": 1, "status": "given_up", "all_final": True, "correction": False,
                           "final": True, "graded": 2, "to_grade": 2}  # fmt: skip
    page = one.get(f"/grade/{pid}").text
    assert f'data-testid="reveal-model-A">{MODELS[0]}<' in page and f'data-testid="reveal-model-B">{MODELS[1]}<' in page
    assert GradingRepo(app.state.store).assignment(pid, ids[G1])["revealed_at"] is not None
    other = two.get(f"/grade/{pid}?answer=A").text
    assert 'data-testid="reveal"' not in other and MODELS[0] not in other
    assert "grader one only" not in other and " checked" not in other  # nothing of grader one's grade
    assert GradingRepo(app.state.store).assignment(pid, ids[G2])["revealed_at"] is None
    assert 'grading-final-squares">0 of 2<' in two.get("/grade").text
    assert 'grading-final-squares">2 of 2<' in one.get("/grade").text


def _tabs(html: str) -> list[str]:
    """The answer names on a grading page, in page order."""
    return re.findall(r'data-testid="answer-tab-([A-Z]+)"', html)


def test_given_up_needs_a_reason(app, tmp_path):
    pid = _problem(app, tmp_path)
    ids = _users(app)
    a0 = _answer(app, pid, 0)
    blind.assign(app.state.store, pid, ids[G1], rng=Scripted())
    one = signed_in(app, G1)
    for comment in ("", "   "):
        refused = _save(one, pid, "A", 0, status="given_up", comment=comment)
        assert refused.status_code == 400
        assert refused.json() == {"error": "a given-up grade needs a reason: say in the comment why this answer "
                                           "cannot be graded"}  # fmt: skip
    assert get_grade(app.state.store, a0, G1) is None
    done = _save(one, pid, "A", 0, status="given_up", comment="The answer is cut off after two lines.")
    assert done.status_code == 200 and done.json()["all_final"] is True
    # a grades file follows the same rule
    path = tmp_path / "grades.json"
    path.write_text(json.dumps([{"answer_id": a0, "grader": "offline@example.org", "status": "given_up"}]))
    with pytest.raises(UserError, match="given-up grade needs a reason"):
        import_grades(app.state.store, path)


def test_after_the_reveal_grades_are_frozen_and_a_change_is_kept_as_a_correction(any_app, tmp_path):
    app = any_app
    store = app.state.store
    pid = _problem(app, tmp_path)
    ids = _users(app)
    answers = [_answer(app, pid, 0, MODELS[0]), _answer(app, pid, 1, MODELS[1])]
    blind.assign(store, pid, ids[G1], rng=Scripted())  # A: answers[0], B: answers[1]
    one = signed_in(app, G1)
    # the attack: give up on everything to see the names, then regrade with the names known
    for alias in ("A", "B"):
        assert _save(one, pid, alias, 0, status="given_up", comment="Cannot follow it.").status_code == 200
    assert f'data-testid="reveal-model-A">{MODELS[0]}<' in one.get(f"/grade/{pid}").text
    rewrite = _save(one, pid, "A", 1, progress="3", indicators=ALL_TRUE, status="complete", comment="Full marks.")
    assert rewrite.status_code == 200
    assert rewrite.json() == {"revision": 2, "status": "complete", "all_final": True, "correction": True,
                              "final": True, "graded": 2, "to_grade": 2}  # the blind grade counts: given up, final
    kept = get_grade(store, answers[0], G1)
    assert (kept.status, kept.progress, kept.comment, kept.revision) == ("given_up", None, "Cannot follow it.", 1)
    [fix] = list_corrections(store, answer_id=answers[0])
    assert (fix.grader, fix.status, fix.progress, fix.comment, fix.revision) == (G1, "complete", 3, "Full marks.", 2)
    assert _save(one, pid, "A", 1, progress="0").status_code == 409  # a correction is locked like a grade
    page = one.get(f"/grade/{pid}?answer=A").text
    assert 'data-testid="grade-frozen"' in page and 'data-revision="2"' in page
    assert 'data-testid="grade-blind-value">given up<' in page

    # the statistics count the blind grades only, and say so; the exports keep both, flagged
    admin = signed_in(app, ADMIN)
    stats = admin.get("/admin/stats").text
    assert "0 complete grades (2 incomplete or given up, left out)." in stats
    assert 'data-testid="stats-corrections">Grades changed after their grader saw the model names: 1.' in stats
    rows = list(csv.DictReader(io.StringIO(admin.get("/admin/export/grades.csv").text)))
    assert [(r["answer_id"], r["status"], r["revision"], r["after_reveal"]) for r in rows] == sorted(
        [(answers[0], "given_up", "1", "false"), (answers[1], "given_up", "1", "false")]) + [
        (answers[0], "complete", "2", "true")]  # fmt: skip
    block = admin.get("/admin/export/stats.json").json()["grade_corrections"]
    assert (block["grades"], block["revisions"]) == (1, 1) and "leaves the corrections out" in block["rule"]

    # an answer added later hides the names again; the answers already revealed stay frozen, the new one is not
    late = _answer(app, pid, 2, "prov/late-model")
    blind.assign(store, pid, ids[G1], rng=Scripted(names=["K"]))
    assert 'data-testid="reveal"' not in one.get(f"/grade/{pid}").text
    again = _save(one, pid, "B", 1, progress="2", indicators=ALL_TRUE, status="complete", comment="Readable now.")
    assert again.json()["correction"] is True and get_grade(store, answers[1], G1).status == "given_up"
    fresh = _save(one, pid, "K", 0, progress="1")
    assert fresh.json()["correction"] is False and get_grade(store, late, G1).progress == 1


def test_a_late_answer_draws_its_name_like_the_others(app, tmp_path):
    """With names given in page order, an answer added later got the next letter (G after A-F), the last one; now
    its name is drawn like the others', so it is the last name about as often as any answer (1 in 7), not always."""
    pid = _problem(app, tmp_path)
    store = app.state.store
    for n in range(6):
        _answer(app, pid, n)
    graders = [app.state.repo.create_user(f"g{k}@example.org", "unused-hash", verified=True, roles=("grader",))
               for k in range(140)]  # fmt: skip
    for k, uid in enumerate(graders):
        blind.assign(store, pid, uid, rng=random.Random(k))
    late = _answer(app, pid, 6)
    last = 0
    for k, uid in enumerate(graders):
        before = dict(_order(app, pid, uid))
        blind.assign(store, pid, uid, rng=random.Random(1000 + k))
        after = _order(app, pid, uid)
        assert [name for name, _ in after] == sorted(name for name, _ in after)  # listed by name
        assert {n: a for n, a in after if a != late} == before  # the names given before are kept
        last += after[-1][1] == late
    assert 8 <= last <= 34  # 20 expected (140 / 7); always 140 when the late answer got the next letter


def test_the_grading_page_lists_answers_by_name_after_a_refresh(app, tmp_path):
    pid = _problem(app, tmp_path)
    _users(app)
    for n in range(6):
        _answer(app, pid, n)
    app.state.grading_rng = random.Random(1)
    admin = signed_in(app, ADMIN)

    def assign() -> None:
        token = csrf_from(admin.get("/admin/grading").text)
        sent = admin.post("/admin/grading", data={"problem_id": pid, "email": G1, "csrf_token": token},
                          follow_redirects=False)  # fmt: skip
        assert sent.status_code == 303

    assign()
    one = signed_in(app, G1)
    before = _tabs(one.get(f"/grade/{pid}").text)
    _answer(app, pid, 6)
    assign()
    after = _tabs(one.get(f"/grade/{pid}").text)
    assert len(after) == 7 and after == sorted(after) and set(before) < set(after)
    [new] = set(after) - set(before)
    assert "Proof text number 6." in one.get(f"/grade/{pid}?answer={new}").text


# -- flags ------------------------------------------------------------------------------------------------------------


def test_flags_reach_the_organisers(app, tmp_path):
    pid = _problem(app, tmp_path)
    ids = _users(app)
    answers = [_answer(app, pid, 0, MODELS[0]), _answer(app, pid, 1, MODELS[1])]
    blind.assign(app.state.store, pid, ids[G1], rng=Scripted([1, 0]))
    one = signed_in(app, G1)
    token = csrf_from(one.get(f"/grade/{pid}").text)
    empty = one.post(f"/grade/{pid}/flag", data={"alias": "A", "message": " ", "csrf_token": token})
    assert empty.status_code == 400 and "organisers should look at" in empty.text
    sent = one.post(f"/grade/{pid}/flag", data={"alias": "A", "message": "The answer is cut off mid-proof.",
                                                "csrf_token": token}, follow_redirects=False)  # fmt: skip
    assert sent.status_code == 303 and sent.headers["location"] == f"/grade/{pid}?answer=A&flagged=1"
    assert one.get("/admin/flags").status_code == 404
    two = signed_in(app, G2)  # not assigned to this question
    assert two.post(f"/grade/{pid}/flag", data={"alias": "A", "message": "x",
                                                "csrf_token": csrf_from(two.get("/grade").text)}).status_code == 404
    admin = signed_in(app, ADMIN)
    flags = admin.get("/admin/flags").text
    assert "The answer is cut off mid-proof." in flags
    assert f"Answer A: {MODELS[1]}" in flags and answers[1] in flags  # organisers see what was flagged
    (row,) = GradingRepo(app.state.store).flags()
    assert (row["answer_id"], row["user_id"], row["resolved_at"]) == (answers[1], ids[G1], None)
    resolved = admin.post(f"/admin/flags/{row['id']}/resolve", data={"csrf_token": csrf_from(flags)},
                          follow_redirects=False)  # fmt: skip
    assert resolved.status_code == 303
    assert 'data-testid="flag-resolved"' in admin.get("/admin/flags").text
    assert GradingRepo(app.state.store).flags(open_only=True) == []


# -- the alias leak test ----------------------------------------------------------------------------------------------


def test_nothing_identifies_a_model_before_the_reveal(app, tmp_path):
    pid = _problem(app, tmp_path)
    ids = _users(app)
    answers = [_answer(app, pid, 0, MODELS[0], run="run-secret-kangaroo"),
               _answer(app, pid, 1, MODELS[1], run="run-hidden-wombat")]  # single-turn ones are never assigned  # fmt: skip
    blind.assign(app.state.store, pid, ids[G1], rng=Scripted([1, 0]))
    secrets = [*MODELS, *(part for m in MODELS for part in m.split("/")), *answers, "run-secret-kangaroo",
               "run-hidden-wombat", "918273", "918274", "agentic", "single-turn"]  # fmt: skip
    client = signed_in(app, G1)
    seen: list[str] = []

    def keep(response) -> Any:
        seen.append(response.text + json.dumps(dict(response.headers)))
        return response

    token = csrf_from(keep(client.get(f"/grade/{pid}")).text)
    keep(client.get("/grade"))
    for alias in ("A", "B"):
        keep(client.get(f"/grade/{pid}?answer={alias}"))
    keep(client.get(f"/grade/{pid}?answer=Z"))
    keep(_save(client, pid, "A", 0, progress="2", comment="draft"))
    keep(_save(client, pid, "A", 0, progress="1"))  # 409
    keep(_save(client, pid, "B", 0, indicators=json.dumps({"correct_result": "na"})))  # 400
    keep(_save(client, pid, "B", 0, status="complete"))  # saved as incomplete, with the missing fields named
    keep(client.post(f"/grade/{pid}/notes", json={"notes": "n", "revision": 1}, headers={"X-CSRF-Token": token}))
    keep(client.post(f"/grade/{pid}/notes", json={"notes": "n", "revision": 1}, headers={"X-CSRF-Token": token}))
    keep(client.post(f"/grade/{pid}/flag", data={"alias": "B", "message": "odd", "csrf_token": token},
                     follow_redirects=False))  # fmt: skip
    keep(client.get(f"/grade/{pid}?answer=B&flagged=1"))
    keep(client.post(f"/grade/{pid}/flag", data={"alias": "Q", "message": "odd", "csrf_token": token}))
    keep(_save(client, pid, "A", 1, status="given_up", comment="unreadable"))
    assert len(seen) == 15
    for n, text in enumerate(seen):
        assert [s for s in secrets if s in text] == [], n

    keep(_save(client, pid, "B", 1, status="given_up", comment="unreadable"))
    assert seen[-1].startswith('{"revision":2')
    after = client.get(f"/grade/{pid}").text
    assert MODELS[0] in after and MODELS[1] in after
    assert f'data-testid="reveal-model-A">{MODELS[1]}<' in after  # the scripted order put answer 1 first


# -- the page in a browser ---------------------------------------------------------------------------------------------


@pytest.mark.browser
def test_grading_page_autosaves_after_the_debounce(open_page: Any, platform: Any, tmp_path) -> None:
    from playwright.sync_api import expect

    app = platform.app
    pid = _problem(app, tmp_path)
    ids = _users(app)
    _answer(app, pid, 0)
    blind.assign(app.state.store, pid, ids[G1], rng=Scripted())
    page = open_page()
    page.goto("/login")
    page.get_by_test_id("login-email").fill(G1)
    page.get_by_test_id("login-password").fill(PASSWORD)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url("**/")
    page.goto(f"/grade/{pid}?answer=A")
    state = page.get_by_test_id("autosave-state")
    page.get_by_test_id("grade-progress-2").check()
    page.get_by_test_id("grade-comment").fill("Sound until the last step.")
    expect(state).to_have_text("Unsaved changes")
    expect(state).to_have_text("Saved", timeout=15_000)
    expect(page.get_by_test_id("answer-tab-status-A")).to_have_text("incomplete")
    page.reload()
    expect(page.get_by_test_id("grade-progress-2")).to_be_checked()
    expect(page.get_by_test_id("grade-comment")).to_have_value("Sound until the last step.")
    page.get_by_test_id("focus-toggle").click()
    expect(page.locator("body")).to_have_class("focus-mode")
    expect(page.get_by_test_id("nav-home")).to_be_hidden()
