"""Model tests of a question and the administrators' evaluations, through the platform's pages."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient
from helpers.improof_samples import odd_sums_yaml, submit
from helpers.web import PASSWORD, post_form, signed_in

from theorembench.methods.improof.answers import list_answers
from theorembench.methods.improof.autograde import override_history
from theorembench.methods.improof.catalog import import_problems
from theorembench.store.jobs import JobRepo
from theorembench.web import accounts, jobs
from theorembench.web.app import create_app
from theorembench.web.auth import hash_password
from theorembench.web.policy import Subject

MODEL = "openai-api/fake/m"
ADMIN, AUTHOR, OTHER = "admin@example.org", "author@example.org", "other@example.org"


SCRIPT = {"rules": [
    {"match": "SUB-TWO", "reply": submit("101")},
    {"match": "SUB-ONE", "reply": submit("9")},
    {"match": "MAIN-Q", "reply": submit("By *induction* on $n$."), "usage": {"prompt_tokens": 10,
                                                                           "completion_tokens": 17}},
]}  # fmt: skip


def _make(db: str, tmp_path: Path, status: str = "draft"):
    app = create_app(db, secret_key="test secret", models=[MODEL], workers=0, work_dir=tmp_path / "work")
    repo = app.state.repo
    accounts.create_admin(repo, ADMIN, PASSWORD)
    author = repo.create_user(AUTHOR, hash_password(PASSWORD), verified=True, roles=("contributor",))
    repo.create_user(OTHER, hash_password(PASSWORD), verified=True, roles=("contributor",))
    path = tmp_path / "problem.yaml"
    path.write_text(odd_sums_yaml(author=author, status=status))
    import_problems(app.state.store, path)
    return app, author


@pytest.fixture
def site(tmp_path: Path):
    app, author = _make(str(tmp_path / "web.db"), tmp_path)
    yield app, author
    app.state.store.close()


def _work(app) -> str | None:
    return jobs.work_once(app.state.store, "test-worker", models=app.state.models, work_dir=app.state.work_dir,
                          heartbeat_s=0.05)  # fmt: skip


def test_the_author_tests_a_question_and_reads_the_graded_answer(site, fake_env):
    app, author = site
    fake_env.set_script(SCRIPT)
    writer, other, admin = signed_in(app, AUTHOR), signed_in(app, OTHER), signed_in(app, ADMIN)
    assert post_form(other, "/questions/odd-sums/test", {"model": MODEL}).status_code == 404  # not their question
    assert post_form(writer, "/questions/odd-sums/test", {"model": "openai-api/fake/nope"}).status_code == 400
    started = post_form(writer, "/questions/odd-sums/test", {"model": MODEL})
    assert started.status_code == 303 and started.headers["location"].startswith("/jobs/j-")
    url = started.headers["location"]
    queued = writer.get(url)
    assert queued.status_code == 200 and 'data-testid="job-status">queued<' in queued.text
    assert other.get(url).status_code == 404 and admin.get(url).status_code == 200
    assert TestClient(app).get(url, follow_redirects=False).headers["location"] == "/login"

    assert _work(app) == url.removeprefix("/jobs/")
    done = writer.get(url).text
    assert 'data-testid="job-status">done<' in done
    assert "<em>induction</em>" in done  # the main answer rendered as Markdown
    assert '<progress max="100" value="100"' in done
    verdicts = done.split('data-testid="job-sub-verdict">')[1:]
    assert [v.split("<")[0] for v in verdicts] == ["correct", "wrong"]
    assert 'data-testid="job-sub-extracted">101<' in done and 'data-testid="job-score">0.33<' in done
    assert "<td>Main question</td><td>" in done and "<td>17</td>" in done  # token usage of the main stage
    assert list_answers(app.state.store) == []  # the draft's test answer stayed out of the benchmark

    # the question page's section: the test with its answer, and the form for those who may start one
    def section(email: str) -> str:
        user = app.state.repo.user_by_email(email)
        ctx = SimpleNamespace(user=user, repo=app.state.repo, request=SimpleNamespace(app=app))
        values = jobs.question_tests(ctx, {"id": "odd-sums"}, Subject(author=author, status="draft"))
        return app.state.templates.get_template("_model_tests_section.html").render(csrf_token="t", **values)

    mine = section(AUTHOR)
    assert 'data-testid="model-test-form"' in mine and "<em>induction</em>" in mine
    assert 'data-testid="model-test-status">done<' in mine and f'<option value="{MODEL}">' in mine
    assert section(OTHER).strip() == ""


def test_twenty_tests_a_day_then_429(db_url, tmp_path: Path):
    app, author = _make(db_url, tmp_path)
    try:
        store = app.state.store
        for _ in range(19):
            jobs.enqueue_test(store, author, "odd-sums", 1, MODEL, models=[MODEL])
        jobs.enqueue_test(store, author, "odd-sums", 1, MODEL, models=[MODEL], now=time.time() - 24 * 3600 - 5)
        writer = signed_in(app, AUTHOR)
        assert post_form(writer, "/questions/odd-sums/test", {"model": MODEL}).status_code == 303  # the 20th today
        refused = post_form(writer, "/questions/odd-sums/test", {"model": MODEL})
        assert refused.status_code == 429
        assert "20 model tests in the last 24 hours" in refused.text
        assert JobRepo(store).count_since(author, "test_model", 0) == 21
    finally:
        app.state.store.close()


def test_an_admin_evaluation_runs_on_the_benchmark_and_verdicts_can_be_overridden(tmp_path: Path, fake_env):
    app, _author = _make(str(tmp_path / "web.db"), tmp_path, status="active")
    try:
        fake_env.set_script(SCRIPT)
        admin, writer = signed_in(app, ADMIN), signed_in(app, AUTHOR)
        listing = admin.get("/admin/evaluations")
        assert listing.status_code == 200 and 'data-testid="eval-problem-odd-sums"' in listing.text
        assert writer.get("/admin/evaluations").status_code == 404
        bad = post_form(admin, "/admin/evaluations", {"model": MODEL, "mode": "agentic", "scope": "chosen",
                                                      "main_tokens": "1000", "sub_tokens": "500", "epochs": "1"})
        assert bad.status_code == 400 and "Choose at least one question" in bad.text
        bad = post_form(admin, "/admin/evaluations", {"model": MODEL, "mode": "agentic", "scope": "all",
                                                      "main_tokens": "lots", "sub_tokens": "500", "epochs": "1"})
        assert bad.status_code == 400 and "main budget must be a whole number" in bad.text
        launched = post_form(admin, "/admin/evaluations", {
            "model": MODEL, "mode": "agentic", "scope": "chosen", "problem:odd-sums": "1", "main_tokens": "1000",
            "sub_tokens": "500", "epochs": "1"})  # fmt: skip
        assert launched.status_code == 303
        url = launched.headers["location"]
        job_id = url.removeprefix("/admin/evaluations/")
        assert JobRepo(app.state.store).get(job_id)["params"]["problems"] == ["odd-sums"]
        assert 'data-testid="eval-no-answers"' in admin.get(url).text
        assert writer.get(url).status_code == 404

        assert _work(app) == job_id
        page = admin.get(url).text
        assert 'data-testid="job-status">done<' in page and "<em>induction</em>" in page
        assert 'data-testid="job-progress-count">1 of 1<' in page
        [answer] = list_answers(app.state.store)  # this time on the benchmark's tables
        assert f'data-answer-id="{answer["id"]}"' in page
        assert [v.split("<")[0] for v in page.split('data-testid="eval-verdict">')[1:]] == ["correct", "wrong"]

        target = f"/admin/answers/{answer['id']}/verdicts/1"
        form = {"correct": "true", "reason": "101 is a typo the grader accepts", "back": url}
        assert post_form(writer, target, form).status_code == 404
        assert post_form(admin, target, {"correct": "maybe", "reason": "x"}).status_code == 400
        assert post_form(admin, target, {"correct": "true", "reason": " "}).status_code == 400
        done = post_form(admin, target, form)
        assert done.status_code == 303 and done.headers["location"] == f"{url}#answer-{answer['id']}"
        assert post_form(admin, f"/admin/answers/{answer['id']}/verdicts/0",
                         {"correct": "true", "reason": "verified by hand", "back": "https://evil.example/"}
                         ).headers["location"] == f"/admin/evaluations#answer-{answer['id']}"  # fmt: skip
        page = admin.get(url).text
        assert [v.split("<")[0] for v in page.split('data-testid="eval-verdict">')[1:]] == ["correct", "correct"]
        assert f"{ADMIN}: 101 is a typo the grader accepts" in page
        history = override_history(app.state.store, answer["id"])
        assert [(h["sub_index"], h["correct"], h["actor"]) for h in history] == [(1, True, ADMIN), (0, True, ADMIN)]
        assert 'data-testid="eval-status">done<' in admin.get("/admin/evaluations").text
    finally:
        app.state.store.close()


def test_job_pages_of_unknown_jobs_are_not_found(site):
    app, _author = site
    admin = signed_in(app, ADMIN)
    assert admin.get("/jobs/j-missing").status_code == 404
    assert admin.get("/admin/evaluations/j-missing").status_code == 404
