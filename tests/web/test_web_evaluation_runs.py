"""Every run in the store on the administrators' evaluations page, also those started from the command line, and
the verify/override action on their answers; the model-test section's count of tests left."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

from helpers.cli import PYTHON, cli_env
from helpers.improof_samples import odd_sums_yaml
from helpers.web import PASSWORD, post_form, signed_in

from theorembench.methods.improof.answers import list_answers, record_answer
from theorembench.methods.improof.autograde import grade_answer, override_history
from theorembench.methods.improof.catalog import import_problems
from theorembench.store import Store
from theorembench.web import accounts, jobs
from theorembench.web.app import create_app
from theorembench.web.auth import hash_password
from theorembench.web.policy import Subject

MODEL = "openai-api/fake/cli-model"
ADMIN, AUTHOR = "admin@example.org", "author@example.org"
SINGLE_TURN = {"rules": [{"match": "SUB-TWO", "reply": "So the answer is \\boxed{101}."},
                         {"match": "SUB-ONE", "reply": "It is \\boxed{9}."},
                         {"match": "MAIN-Q", "reply": "By induction on $n$."}]}  # fmt: skip


def _cli_eval(db: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "theorembench.cli", "improof", "eval", "--model", MODEL, "--mode",
                           "single-turn", "--main-tokens", "1000", "--sub-tokens", "500", "--db", str(db),
                           "--out", str(tmp_path / "out"), "--log-dir", str(tmp_path / "logs")],
                          env=cli_env(), cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip


def _rows(html: str, testid: str) -> list[str]:
    return [part.split("<")[0] for part in html.split(f'data-testid="{testid}">')[1:]]


def test_a_command_line_run_is_listed_and_its_auto_grades_can_be_verified_and_overridden(tmp_path: Path, fake_env):
    db = tmp_path / "web.db"
    with Store(db) as st:
        problems = tmp_path / "problems.yaml"
        problems.write_text(odd_sums_yaml(status="active"))
        import_problems(st, problems)
    fake_env.set_script(SINGLE_TURN)
    done = _cli_eval(db, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    app = create_app(str(db), secret_key="test secret", models=[MODEL], workers=0, work_dir=tmp_path / "work")
    try:
        accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
        [answer] = list_answers(app.state.store)
        admin = signed_in(app, ADMIN)
        listing = admin.get("/admin/evaluations").text
        assert f'data-run-id="{answer["run_id"]}"' in listing
        assert _rows(listing, "store-run-answers") == ["1"]
        assert _rows(listing, "store-run-origin") == ["command line or Python"]
        assert "No evaluations yet." in listing  # nothing was launched from the browser

        url = f"/admin/evaluations/runs/{answer['run_id']}"
        assert f'href="{url}"' in listing
        page = admin.get(url).text
        assert f'data-answer-id="{answer["id"]}"' in page
        assert _rows(page, "eval-verdict") == ["correct", "wrong"]  # 9 is right, 101 is not 100
        assert f'name="back" value="{url}"' in page

        target = f"/admin/answers/{answer['id']}/verdicts/1"
        done = post_form(admin, target, {"correct": "true", "reason": "101 is the intended reading", "back": url})
        assert done.status_code == 303 and done.headers["location"] == f"{url}#answer-{answer['id']}"
        verified = post_form(admin, f"/admin/answers/{answer['id']}/verdicts/0",
                             {"correct": "true", "reason": "verified by hand", "back": url})  # fmt: skip
        assert verified.status_code == 303
        page = admin.get(url).text
        assert _rows(page, "eval-verdict") == ["correct", "correct"]
        assert f"{ADMIN}: 101 is the intended reading" in page
        history = override_history(app.state.store, answer["id"])
        assert [(h["sub_index"], h["correct"], h["verified"], h["actor"]) for h in history] == [
            (1, True, True, ADMIN), (0, True, True, ADMIN)]  # fmt: skip
        assert admin.get("/admin/evaluations/runs/no-such-run").status_code == 404
    finally:
        app.state.store.close()


def test_every_run_with_answers_is_listed_on_both_backends(db_url, tmp_path: Path):
    app = create_app(db_url, secret_key="test secret", models=[MODEL], workers=0, work_dir=tmp_path / "work")
    try:
        st = app.state.store
        accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
        problems = tmp_path / "problems.yaml"
        problems.write_text(odd_sums_yaml(status="active"))
        import_problems(st, problems)
        older = st.create_run("improof.eval", "sig-a", name="improof agentic", model=MODEL)
        newer = st.create_run("improof.eval", "sig-b", name="improof single-turn", model=MODEL)
        ids = {}
        for key, run_id, epoch in (("a0", older, 0), ("a1", older, 1), ("b0", newer, 0), ("loose", None, 0)):
            ids[key] = record_answer(st, run_id=run_id, problem_id="odd-sums", version=1, model=MODEL, tier=None,
                                     epoch=epoch, mode="agentic", main_answer="Proof.", sub_answers=["9", "100"],
                                     stages=[])  # fmt: skip
            grade_answer(st, ids[key])
        admin = signed_in(app, ADMIN)
        listing = admin.get("/admin/evaluations").text
        shown = [part.split('"')[0] for part in listing.split('data-testid="store-run" data-run-id="')[1:]]
        assert sorted(shown) == sorted([older, newer, "-"])
        assert dict(zip(shown, _rows(listing, "store-run-answers"), strict=True)) == {older: "2", newer: "1", "-": "1"}
        page = admin.get(f"/admin/evaluations/runs/{older}").text
        assert [part.split('"')[0] for part in page.split('data-answer-id="')[1:]] == [ids["a0"], ids["a1"]]
        loose = admin.get("/admin/evaluations/runs/-").text
        assert f'data-answer-id="{ids["loose"]}"' in loose and ids["a0"] not in loose
    finally:
        app.state.store.close()


def test_the_model_test_section_counts_the_tests_left(db_url, tmp_path: Path):
    app = create_app(db_url, secret_key="test secret", models=[MODEL], workers=0, work_dir=tmp_path / "work")
    try:
        st, repo = app.state.store, app.state.repo
        author = repo.create_user(AUTHOR, hash_password(PASSWORD), verified=True, roles=("contributor",))
        problems = tmp_path / "problems.yaml"
        problems.write_text(odd_sums_yaml(author=author, status="draft"))
        import_problems(st, problems)

        def section() -> str:
            ctx = SimpleNamespace(user=repo.user(author), repo=repo, request=SimpleNamespace(app=app))
            values = jobs.question_tests(ctx, {"id": "odd-sums"}, Subject(author=author, status="draft"))
            return app.state.templates.get_template("_model_tests_section.html").render(csrf_token="t", **values)

        assert "20 of 20 tests left for the next 24 hours." in section()
        for _ in range(3):
            jobs.enqueue_test(st, author, "odd-sums", 1, MODEL, models=[MODEL])
        jobs.enqueue_test(st, author, "odd-sums", 1, MODEL, models=[MODEL], now=time.time() - 24 * 3600 - 5)
        assert "17 of 20 tests left for the next 24 hours." in section()  # the day-old one no longer counts
        for _ in range(17):
            jobs.enqueue_test(st, author, "odd-sums", 1, MODEL, models=[MODEL])
        used_up = section()
        assert "No tests left: you started 20 in the last 24 hours." in used_up
        assert 'data-testid="model-test-start" disabled' in used_up
        page = signed_in(app, AUTHOR).get("/questions/odd-sums").text
        assert 'data-testid="model-tests-left">No tests left' in page
    finally:
        app.state.store.close()
