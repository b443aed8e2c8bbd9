"""IMProofBench data model: problem files, versions and status, answers, auto-grading, overrides, human grades."""

from __future__ import annotations

import json
from itertools import combinations_with_replacement, permutations, product

import pytest
import yaml
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.common.errors import UserError
from theorembench.methods.improof import autograde
from theorembench.methods.improof.answers import list_answers, record_answer
from theorembench.methods.improof.autograde import (
    effective_verdicts,
    grade_answer,
    override_history,
    override_verdict,
    regrade,
    weighted_score,
)
from theorembench.methods.improof.catalog import (
    demo_problem_files,
    export_problems,
    get_problem,
    import_demo_problems,
    import_problems,
    list_problems,
    save_version,
    set_status,
)
from theorembench.methods.improof.grades import Grade, StaleGrade, get_grade, import_grades, list_grades, save_grade
from theorembench.methods.improof.model_tiers import generation_params, grading_priority, human_graded, tier_of
from theorembench.methods.improof.problems import ProblemFileError
from theorembench.store import Store
from theorembench.store.improof import ImproofRepo

IMPROOF_TABLES = ["improof_problems", "improof_problem_versions", "improof_status_events", "improof_answers",
                  "improof_verdicts", "improof_verdict_overrides", "improof_grades"]  # fmt: skip
DEMO_IDS = ["binomial-reciprocals", "spanning-trees-kmn", "stable-graphs"]
STAGES = [{"stage": "main", "outcome": "submitted", "output_tokens": 10, "reasoning_tokens": 5, "input_tokens": 20,
           "tool_calls": {"python": 1}, "turns": 2, "error": None}]  # fmt: skip

PROBLEM = {
    "id": "toy", "title": "A toy problem", "statement": "Show that $1 + 1 = 2$.", "solution": "Count.",
    "tags": ["arithmetic", "open problem"], "difficulty": {"background": 1, "reasoning": 1, "insight": 1, "compute": 1},
    "author": "alice@example.org",
    "subquestions": [{"text": "What is $1+1$?", "answer": "2", "kind": "integer", "points": 2, "rationale": "r"},
                     {"text": "Is it even?", "answer": "true", "kind": "boolean"}],
}  # fmt: skip


def counts(store: Store) -> list[int]:
    got = store.table_counts(IMPROOF_TABLES)
    return [got[t] for t in IMPROOF_TABLES]


def write(path, data, fmt="yaml"):
    path.write_text(json.dumps(data) if fmt == "json" else yaml.safe_dump(data, sort_keys=False))
    return path


def answer(store: Store, problem_id: str, subs: list[str | None], *, epoch: int = 0, model: str = "m/x") -> str:
    version = get_problem(store, problem_id).version
    return record_answer(store, run_id="r1", problem_id=problem_id, version=version, model=model, tier=1, epoch=epoch,
                         mode="agentic", main_answer="proof", sub_answers=subs, stages=STAGES)  # fmt: skip


# -- problem files --------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_demo_problems_round_trip_through_export_and_import(db_url, tmp_path, fmt):
    with Store(db_url) as store:
        assert sorted(import_demo_problems(store)) == DEMO_IDS
        text = export_problems(store, fmt=fmt)
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
        assert [p["id"] for p in data] == DEMO_IDS
        stable = data[2]
        assert list(stable) == ["id", "title", "statement", "solution", "tags", "difficulty", "author",
                                "subquestions", "status", "version", "updated_at"]  # fmt: skip
        assert stable["status"] == "active" and stable["version"] == 1
        assert stable["difficulty"] == {"background": 3, "reasoning": 4, "insight": 3, "compute": 3}
        assert [(s["answer"], s["kind"], s["points"]) for s in stable["subquestions"]] == [
            ("9", "integer", 1), ("114", "integer", 1), ("111198615276", "integer", 2)]  # fmt: skip
        assert data[0]["subquestions"][0]["answer"] == "\\frac{8}{3}"
        assert data[1]["subquestions"][1]["kind"] == "expression"
        # importing the export again into the same store changes nothing: no new versions, no status events
        before = counts(store)
        path = tmp_path / f"export.{fmt}"
        path.write_text(text)
        assert import_problems(store, path) == DEMO_IDS
        assert counts(store) == before == [3, 3, 3, 0, 0, 0, 0]
    with Store(tmp_path / "other.db") as other:  # and into a fresh store it gives the same problems
        assert import_problems(other, path, actor="bob") == DEMO_IDS
        again = json.loads(export_problems(other, fmt="json"))
    strip = [{k: v for k, v in p.items() if k != "updated_at"} for p in data]
    assert [{k: v for k, v in p.items() if k != "updated_at"} for p in again] == strip


def test_a_problem_without_id_gets_one_from_its_title(tmp_path):
    data = {k: v for k, v in PROBLEM.items() if k != "id"} | {"title": "Stable graphs: genus ≥ 2!"}
    with Store(tmp_path / "s.db") as store:
        assert import_problems(store, write(tmp_path / "p.yaml", data)) == ["stable-graphs-genus-2"]
        assert get_problem(store, "stable-graphs-genus-2").open_problem


def test_every_bad_field_has_its_own_line_and_nothing_is_stored(db_url, tmp_path):
    good = PROBLEM
    bad = {
        "id": "stable-graphs", "title": "Stable graphs", "statement": "", "hint": "none",
        "difficulty": {"background": 2, "reasoning": 3, "insight": 7, "speed": 1},
        "status": "published", "tags": ["ok", 3],
        "subquestions": [{"text": "N_3?", "answer": "9", "kind": "matrix", "points": 0},
                         {"text": "N_8?", "answer": 0.5, "kind": "integer", "extra": 1}],
    }  # fmt: skip
    path = write(tmp_path / "problems.yaml", [good, bad, "not a problem", dict(good)])
    with Store(db_url) as store:
        with pytest.raises(ProblemFileError) as caught:
            import_problems(store, path)
        assert counts(store) == [0] * 7
    p2 = "problems.yaml: problem 2 (stable-graphs)"
    assert caught.value.problems == [
        f"{p2}: hint: unknown field (known: id, title, statement, solution, tags, difficulty, author, subquestions, "
        "status, version, updated_at)",
        f"{p2}: statement: must not be empty",
        f"{p2}: solution: missing",
        f"{p2}: tags[1]: must be non-empty text, got 3",
        f"{p2}: difficulty.speed: unknown field (known: background, reasoning, insight, compute)",
        f"{p2}: difficulty.insight: must be 1..5, got 7",
        f"{p2}: difficulty.compute: missing (1..5)",
        f"{p2}: status: must be one of draft, under_review, approved, active, retired, withdrawn, got 'published'",
        f"{p2}: subquestions[1].kind: must be one of integer, rational, real, boolean, expression, tuple, list, set, "
        "interval, got 'matrix'",
        f"{p2}: subquestions[1].points: must be a number > 0, got 0",
        f"{p2}: subquestions[2].extra: unknown field (known: text, answer, kind, points, rationale)",
        f"{p2}: subquestions[2].answer: write a decimal answer as text (quoted), got 0.5",
        "problems.yaml: problem 3: must be a mapping of fields, got 'not a problem'",
        "problems.yaml: problem 4 (toy): id: toy is also problem 1",
    ]  # fmt: skip
    assert str(caught.value).count("\n") == 13


def test_unreadable_files_are_one_line_errors(tmp_path):
    with Store(tmp_path / "s.db") as store:
        (tmp_path / "broken.yaml").write_text("id: [unclosed\n")
        with pytest.raises(ProblemFileError, match=r"^broken.yaml: not YAML at line 2"):
            import_problems(store, tmp_path / "broken.yaml")
        (tmp_path / "broken.json").write_text("{")
        with pytest.raises(ProblemFileError, match=r"^broken.json: not JSON"):
            import_problems(store, tmp_path / "broken.json")
        (tmp_path / "empty.yaml").write_text("")
        with pytest.raises(ProblemFileError, match=r"^empty.yaml: no problems"):
            import_problems(store, tmp_path / "empty.yaml")
        assert counts(store) == [0] * 7


# -- versions and status ---------------------------------------------------------


def test_status_moves_along_the_workflow_and_withdrawn_is_reachable_from_anywhere(db_url, tmp_path):
    with Store(db_url) as store:
        import_problems(store, write(tmp_path / "p.json", PROBLEM, "json"), actor="alice")
        import_problems(store, write(tmp_path / "q.json", PROBLEM | {"id": "other"}, "json"), actor="alice")
        assert get_problem(store, "toy").status == "draft"
        with pytest.raises(UserError, match=r"cannot move from draft to approved \(allowed from draft: "
                                            r"under_review, withdrawn\)"):  # fmt: skip
            set_status(store, "toy", "approved", "admin")
        set_status(store, "toy", "under_review", "alice", "ready")
        set_status(store, "toy", "draft", "reviewer", "needs a clearer statement")  # returned by the reviewer
        for to in ("under_review", "approved", "draft", "under_review", "approved", "active"):
            set_status(store, "toy", to, "admin")
        with pytest.raises(UserError, match="cannot move from active to draft"):
            set_status(store, "toy", "draft", "admin")
        set_status(store, "toy", "retired", "alice", "solved in a new paper")
        set_status(store, "toy", "withdrawn", "alice")
        with pytest.raises(UserError, match=r"cannot move from withdrawn to draft \(allowed from withdrawn: none\)"):
            set_status(store, "toy", "draft", "alice")
        set_status(store, "other", "withdrawn", "alice")  # straight from draft
        with pytest.raises(UserError, match="unknown status 'published'"):
            set_status(store, "other", "published", "alice")
        with pytest.raises(UserError, match="no problem 'nope'"):
            set_status(store, "nope", "draft", "alice")
        events = ImproofRepo(store).status_events("toy")
        assert [(e["from_status"], e["to_status"], e["actor"]) for e in events] == [
            (None, "draft", "alice"), ("draft", "under_review", "alice"), ("under_review", "draft", "reviewer"),
            ("draft", "under_review", "admin"), ("under_review", "approved", "admin"), ("approved", "draft", "admin"),
            ("draft", "under_review", "admin"), ("under_review", "approved", "admin"), ("approved", "active", "admin"),
            ("active", "retired", "alice"), ("retired", "withdrawn", "alice")]  # fmt: skip
        assert events[2]["note"] == "needs a clearer statement"
        assert [p["status"] for p in list_problems(store)] == ["withdrawn", "withdrawn"]
        assert [p["id"] for p in list_problems(store, "withdrawn")] == ["other", "toy"]
        assert store.table_counts(["improof_problem_versions"]) == {"improof_problem_versions": 2}  # no new versions


def test_editing_content_makes_a_new_immutable_version(db_url, tmp_path):
    with Store(db_url) as store:
        import_problems(store, write(tmp_path / "p.yaml", PROBLEM), actor="alice")
        first = ImproofRepo(store).version("toy", 1)
        edited = get_problem(store, "toy").model_copy(update={"statement": "Show that $1+1=2$ in $\\mathbb{N}$."})
        assert save_version(store, edited, "alice", "clearer") == 2
        assert save_version(store, edited, "alice") == 2  # the same content again: no version
        import_problems(store, write(tmp_path / "p.yaml", PROBLEM | {"status": "under_review"}), actor="bob")
        assert get_problem(store, "toy").version == 3  # the file's old statement is a new version, and its status
        assert get_problem(store, "toy").status == "under_review"
        assert get_problem(store, "toy", 1).statement == get_problem(store, "toy", 3).statement == PROBLEM["statement"]
        assert get_problem(store, "toy", 2).statement.endswith("in $\\mathbb{N}$.")
        assert ImproofRepo(store).version("toy", 1) == first  # version rows are never changed
        versions = ImproofRepo(store).versions("toy")
        assert [(v["version"], v["created_by"], v["note"]) for v in versions] == [
            (1, "alice", "imported from p.yaml"), (2, "alice", "clearer"), (3, "bob", "imported from p.yaml")]
        with pytest.raises(UserError, match="problem toy has no version 4"):
            get_problem(store, "toy", 4)
        import_problems(store, write(tmp_path / "p.yaml", PROBLEM | {"title": "Toy"}))  # no status in the file
        assert (get_problem(store, "toy").version, get_problem(store, "toy").status) == (4, "under_review")
        # a status in the file that the workflow does not allow stops the whole import
        with pytest.raises(ProblemFileError, match=r"problem 1 \(toy\): status: cannot move from under_review "
                                                   r"\(in the store\) to active"):  # fmt: skip
            import_problems(store, write(tmp_path / "p.yaml", [PROBLEM | {"status": "active", "title": "New"}]))
        assert get_problem(store, "toy").version == 4


# -- answers, auto-grading, overrides ------------------------------------------------


def test_auto_grader_on_the_stable_graphs_subquestions_and_weighted_scores(db_url):
    with Store(db_url) as store:
        import_demo_problems(store)
        boxed = answer(store, "stable-graphs", ["$N_3 = 9$, so \\boxed{9}", "Answer: 114", "\\boxed{111198615276}"])
        commas = answer(store, "stable-graphs", ["9", "113", "111,198,615,276"], epoch=1)
        off = answer(store, "stable-graphs", [None, "\\boxed{114}", "111198615275"], epoch=2)
        assert regrade(store) == 3
        assert [v.correct for v in grade_answer(store, boxed)] == [True, True, True]
        assert [v.correct for v in grade_answer(store, commas)] == [True, False, True]
        verdicts = grade_answer(store, off)
        assert [v.correct for v in verdicts] == [None, True, False]
        assert verdicts[0].warning == "high" and verdicts[0].messages == ["no answer submitted"]
        assert verdicts[2].extracted == "111198615275" and verdicts[2].warning == "none"
        # points 1, 1, 2: by hand, 4/4, (1 + 2)/4 and 1/4; a null verdict counts as not correct
        scores = [autograde.answer_score(store, a) for a in (boxed, commas, off)]
        assert scores == [1.0, 0.75, 0.25]
        assert [a["id"] for a in list_answers(store, problem_id="stable-graphs")] == [boxed, commas, off]
        assert list_answers(store, model="other") == []
        stored = list_answers(store, run_id="r1")[0]
        assert stored["stages"] == STAGES and stored["sub_answers"][1] == "Answer: 114"


def test_weighted_score_by_hand():
    assert weighted_score([1, 1, 2], [True, None, True]) == 0.75
    assert weighted_score([3, 1], [False, True]) == 0.25
    assert weighted_score([0.5, 1.5], [True, False]) == 0.25
    assert weighted_score([1], [None]) == 0.0
    with pytest.raises(ValueError):
        weighted_score([1, 2], [True])


def test_answers_are_checked_and_recording_twice_is_idempotent(tmp_path):
    with Store(tmp_path / "s.db") as store:
        import_demo_problems(store)
        first = answer(store, "spanning-trees-kmn", ["432", None])
        assert answer(store, "spanning-trees-kmn", ["432", None]) == first
        assert store.table_counts(["improof_answers"]) == {"improof_answers": 1}
        with pytest.raises(UserError, match="recorded before with different answers"):
            answer(store, "spanning-trees-kmn", ["433", None])
        with pytest.raises(UserError, match="has 2 subquestions: give one text"):
            answer(store, "spanning-trees-kmn", ["432"])
        with pytest.raises(UserError, match="unknown mode"):
            record_answer(store, run_id="r", problem_id="spanning-trees-kmn", version=1, model="m", tier=None,
                          epoch=0, mode="chat", main_answer="", sub_answers=[None, None], stages=[])  # fmt: skip
        with pytest.raises(UserError, match="no version 9 of problem"):
            record_answer(store, run_id="r", problem_id="spanning-trees-kmn", version=9, model="m", tier=None,
                          epoch=0, mode="agentic", main_answer="", sub_answers=[None, None], stages=[])  # fmt: skip
        with pytest.raises(UserError, match="stage 0: outcome must be one of submitted, limit_exceeded, error"):
            record_answer(store, run_id="r", problem_id="spanning-trees-kmn", version=1, model="m", tier=None,
                          epoch=0, mode="agentic", main_answer="", sub_answers=[None, None],
                          stages=[{"stage": "main", "outcome": "timeout"}])  # fmt: skip


def test_overrides_are_an_audit_trail_and_regrading_follows_the_grader_version(db_url, monkeypatch):
    with Store(db_url) as store:
        import_demo_problems(store)
        a = answer(store, "spanning-trees-kmn", ["\\boxed{432}", "\\boxed{n 2^{n-1}}"])
        b = answer(store, "spanning-trees-kmn", ["432", "2^n"], epoch=1)
        assert [v["source"] for v in effective_verdicts(store, a)] == ["ungraded", "ungraded"]
        assert regrade(store) == 2 and regrade(store) == 0
        assert [v["correct"] for v in effective_verdicts(store, b)] == [True, False]

        override_verdict(store, b, 1, correct=True, verified=False, actor="admin", reason="parser misread 2^n")
        override_verdict(store, b, 1, correct=False, verified=True, actor="root", reason="checked: 2^n is wrong")
        override_verdict(store, a, 0, correct=True, verified=True, actor="admin", reason="verified by hand")
        now = effective_verdicts(store, b)
        assert (now[1]["correct"], now[1]["auto_correct"], now[1]["source"], now[1]["verified"]) == (
            False, False, "override", True)  # fmt: skip
        assert now[1]["override"]["actor"] == "root" and now[0]["source"] == "auto"
        history = override_history(store, b)
        assert [(h["sub_index"], h["correct"], h["verified"], h["actor"], h["reason"]) for h in history] == [
            (1, True, False, "admin", "parser misread 2^n"), (1, False, True, "root", "checked: 2^n is wrong")]
        with pytest.raises(UserError, match="subquestions 0..1, not 2"):
            override_verdict(store, b, 2, correct=True, verified=False, actor="admin", reason="x")
        with pytest.raises(UserError, match="needs an actor and a reason"):
            override_verdict(store, b, 0, correct=True, verified=False, actor="admin", reason=" ")

        monkeypatch.setattr(autograde, "GRADER_VERSION", "checker-test-2")
        assert [v["source"] for v in effective_verdicts(store, a)] == ["override", "ungraded"]
        assert regrade(store) == 2 and regrade(store) == 0  # every answer again under the new version
        assert store.table_counts(["improof_verdicts"]) == {"improof_verdicts": 8}  # the old verdicts are kept
        assert {v["grader_version"] for v in effective_verdicts(store, a)} == {"checker-test-2"}
        assert [v["correct"] for v in effective_verdicts(store, b)] == [True, False]  # the latest override still wins
        assert len(override_history(store, b)) == 2


# -- human grades ------------------------------------------------------------------


GRADE_ROW = {"progress": "2", "incorrect_logic": "false", "hallucinated": "False", "calculation": "not sure",
             "conceptual": "no", "understanding": "true", "correct_result": "N/A", "insight": "not_sure",
             "usefulness": "yes", "notes": "matrix errors count as calculation", "comment": "", "status": "complete"}


def test_grades_import_from_csv_and_json_all_or_nothing(db_url, tmp_path):
    with Store(db_url) as store:
        import_demo_problems(store)
        a = answer(store, "stable-graphs", ["9", "114", "1"])
        b = answer(store, "stable-graphs", ["9", "114", "1"], epoch=1)
        columns = ["answer_id", "grader", *GRADE_ROW]
        csv = tmp_path / "grades.csv"
        lines = [",".join(columns),
                 ",".join([a, "alice", *GRADE_ROW.values()]),
                 ",".join([b, "alice", "", "", "", "", "", "", "", "", "", "", "half done", "incomplete"])]
        csv.write_text("\ufeff" + "\n".join(lines) + "\n")  # with a BOM, as spreadsheets write it
        assert import_grades(store, csv) == 2
        alice = get_grade(store, a, "alice")
        assert (alice.progress, alice.status, alice.revision) == (2, "complete", 1)
        assert alice.indicators == {"incorrect_logic": "false", "hallucinated": "false", "calculation": "not_sure",
                                    "conceptual": "false", "understanding": "true", "correct_result": "na",
                                    "insight": "not_sure", "usefulness": "true"}  # fmt: skip
        assert get_grade(store, b, "alice").indicators == {} and get_grade(store, b, "alice").comment == "half done"

        js = tmp_path / "grades.json"
        js.write_text(json.dumps([
            {"answer_id": a, "grader": "bob", "progress": 3, "status": "complete", "comment": "full solution",
             "indicators": {n: False for n in ("incorrect_logic", "hallucinated", "calculation", "conceptual")}
             | {"understanding": True, "correct_result": True, "insight": True, "usefulness": True}},
            {"answer_id": b, "grader": "alice", "status": "given_up", "comment": "unreadable"},
        ]))  # fmt: skip
        assert import_grades(store, js) == 2
        assert get_grade(store, a, "bob").indicators["correct_result"] == "true"
        assert (get_grade(store, b, "alice").status, get_grade(store, b, "alice").revision) == ("given_up", 2)
        assert [(g.answer_id, g.grader) for g in list_grades(store, grader="alice")] == sorted(
            [(a, "alice"), (b, "alice")])  # fmt: skip
        assert [g.grader for g in list_grades(store, answer_id=a)] == ["alice", "bob"]

        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps([
            {"answer_id": a, "grader": "carol", "progress": 2, "status": "complete"},
            {"answer_id": a, "grader": "dave", "progress": 4, "status": "incomplete"},
            {"answer_id": a, "grader": "erin", "status": "incomplete", "insight": "na"},
            {"answer_id": "a-missing", "grader": "erin", "status": "incomplete"},
            {"answer_id": b, "grader": "frank", "status": "done", "flag": 1},
            {"answer_id": a, "grader": "gina", "status": "incomplete"},
            {"answer_id": a, "grader": "gina", "status": "incomplete"},
        ]))  # fmt: skip
        before = counts(store)
        with pytest.raises(UserError) as caught:
            import_grades(store, bad)
        assert str(caught.value).splitlines() == [
            f"{bad}: item 1: a complete grade needs progress and all eight indicators; missing: incorrect_logic, "
            "hallucinated, calculation, conceptual, understanding, correct_result, insight, usefulness",
            f"{bad}: item 2: progress: Input should be less than or equal to 3",
            f"{bad}: item 3: insight must be one of true, false, not_sure, got 'na'",
            f"{bad}: item 4: no answer 'a-missing' in the store",
            f"{bad}: item 5: unknown columns flag",
            f"{bad}: item 7: answer {a} by gina is also at item 6",
        ]  # fmt: skip
        assert counts(store) == before  # nothing from a bad file

        (tmp_path / "cols.csv").write_text("answer_id,progress\nx,1\n")
        with pytest.raises(UserError, match="a CSV with the columns answer_id and grader and status is needed"):
            import_grades(store, tmp_path / "cols.csv")


def test_saving_a_grade_with_a_stale_revision_is_refused(db_url):
    with Store(db_url) as store:
        import_demo_problems(store)
        a = answer(store, "stable-graphs", ["9", "114", "1"])
        first = save_grade(store, Grade(answer_id=a, grader="alice", progress=1), expected_revision=0)
        assert first.revision == 1
        with pytest.raises(StaleGrade, match="is at revision 1, not 0"):  # someone else saw no grade too
            save_grade(store, Grade(answer_id=a, grader="alice", progress=3), expected_revision=0)
        second = save_grade(store, first.model_copy(update={"progress": 2, "comment": "better"}), expected_revision=1)
        assert (second.revision, second.progress, second.comment) == (2, 2, "better")
        with pytest.raises(StaleGrade):  # a tab still holding revision 1
            save_grade(store, first.model_copy(update={"progress": 0}), expected_revision=1)
        assert get_grade(store, a, "alice").progress == 2
        assert save_grade(store, second.model_copy(update={"progress": 3})).revision == 3  # no check asked
        with pytest.raises(ValueError, match="a complete grade needs progress and all eight indicators"):
            Grade(answer_id=a, grader="alice", progress=2, status="complete")
        with pytest.raises(ValueError, match="unknown indicator 'speed'"):
            Grade(answer_id=a, grader="alice", indicators={"speed": "true"})
        with pytest.raises(UserError, match="no answer 'nope'"):
            save_grade(store, Grade(answer_id="nope", grader="alice"))


# -- tiers ---------------------------------------------------------------------------


def test_tiers_follow_table_1():
    assert [tier_of(m) for m in ("openai/gpt-5", "grok-4-0709", "anthropic/claude-sonnet-4-20250514", "o3-2025-04-16",
                                 "openai/gpt-5-mini")] == [1, 1, 3, 4, None]  # fmt: skip
    assert generation_params("google/gemini-2.5-flash") == {"reasoning_tokens": 24576}
    assert [human_graded(t) for t in (1, 2, 3, 4, None)] == [True, True, True, False, False]
    assert [grading_priority(t) for t in (1, 3, 4)] == [1, 3, None]


# -- the command line -------------------------------------------------------------------


def test_improof_commands(tmp_path):
    runner, db = CliRunner(), str(tmp_path / "cli.db")
    files = [str(p) for p in demo_problem_files()]
    assert [p.rsplit("/", 1)[-1] for p in files] == ["binomial-reciprocals.yaml", "spanning-trees.yaml",
                                                    "stable-graphs.yaml"]  # fmt: skip
    done = runner.invoke(app, ["improof", "import", files[2], "--actor", "alice", "--db", db])
    assert done.exit_code == 0 and "imported 1 problem(s): stable-graphs" in done.output
    bad = write(tmp_path / "bad.yaml", PROBLEM | {"difficulty": {"background": 9}})
    done = runner.invoke(app, ["improof", "import", str(bad), "--db", db])
    assert done.exit_code == 2
    assert "bad.yaml: problem 1 (toy): difficulty.background: must be 1..5, got 9" in done.output
    assert "bad.yaml: problem 1 (toy): difficulty.compute: missing (1..5)" in done.output
    done = runner.invoke(app, ["improof", "list", "--json", "--db", db])
    assert [(p["id"], p["status"], p["points"]) for p in json.loads(done.output)] == [("stable-graphs", "active", 4)]
    done = runner.invoke(app, ["improof", "status", "stable-graphs", "retired", "--actor", "alice", "--note", "old",
                               "--db", db])  # fmt: skip
    assert done.exit_code == 0 and "stable-graphs: active -> retired" in done.output
    done = runner.invoke(app, ["improof", "status", "stable-graphs", "draft", "--db", db])
    assert done.exit_code == 2 and "cannot move from retired to draft" in done.output
    out = tmp_path / "out.json"
    done = runner.invoke(app, ["improof", "export", "--id", "stable-graphs", "--format", "json", "--out", str(out),
                               "--db", db])  # fmt: skip
    assert done.exit_code == 0 and json.loads(out.read_text())[0]["status"] == "retired"

    with Store(db) as store:
        a = answer(store, "stable-graphs", ["9", "114", "111198615276"])
    done = runner.invoke(app, ["improof", "regrade", "--db", db])
    assert done.exit_code == 0 and f"graded 1 answer(s) with grader version {autograde.GRADER_VERSION}" in done.output
    done = runner.invoke(app, ["improof", "verdicts", "override", a, "1", "--correct", "false", "--actor", "admin",
                               "--reason", "typo in the key", "--verified", "--db", db])  # fmt: skip
    assert done.exit_code == 0 and "correct=false (auto: true), verified=true" in done.output
    done = runner.invoke(app, ["improof", "verdicts", "override", a, "1", "--correct", "maybe", "--actor", "admin",
                               "--reason", "r", "--db", db])  # fmt: skip
    assert done.exit_code == 2 and "--correct must be true, false or null" in done.output
    grades = tmp_path / "g.csv"
    grades.write_text(f"answer_id,grader,status,progress\n{a},alice,incomplete,1\n")
    done = runner.invoke(app, ["improof", "grades", "import", str(grades), "--db", db])
    assert done.exit_code == 0 and "imported 1 grade(s)" in done.output
    with Store(db) as store:
        assert get_grade(store, a, "alice").progress == 1
        assert [v["correct"] for v in effective_verdicts(store, a)] == [True, False, True]


# -- the stable-graphs values, from the definition -------------------------------------------


def stable_graphs_by_brute_force(genus: int, n_edges: int = 3) -> int:
    """Isomorphism classes of stable graphs of this genus with ``n_edges`` edges, enumerated from the definition.

    A connected multigraph (loops allowed) with E edges has at most E + 1 vertices. Every multiset of
    E edges on V labelled vertices that is connected is taken, with every labelling g_v >= 0 such that
    b_1 + sum g_v = genus (b_1 = E - V + 1) and every vertex with g_v = 0 has valence >= 3 (a loop counts
    twice); two are the same stable graph when a permutation of the vertices maps edges and labels onto
    each other, so each is stored in its smallest form over all permutations.
    """
    classes = set()
    for n in range(1, n_edges + 2):
        b1 = n_edges - n + 1
        if b1 > genus:
            continue
        pairs = [(i, j) for i in range(n) for j in range(i, n)]
        for edges in combinations_with_replacement(pairs, n_edges):
            reached, grew = {0}, True
            while grew:
                grew = False
                for i, j in edges:
                    if (i in reached) != (j in reached):
                        reached |= {i, j}
                        grew = True
            if len(reached) != n:
                continue
            valence = [sum((i == v) + (j == v) for i, j in edges) for v in range(n)]
            for labels in product(range(genus - b1 + 1), repeat=n):
                if sum(labels) != genus - b1 or any(g == 0 and valence[v] < 3 for v, g in enumerate(labels)):
                    continue
                forms = []
                for perm in permutations(range(n)):  # vertex v goes to perm[v]
                    moved = tuple(sorted(tuple(sorted((perm[i], perm[j]))) for i, j in edges))
                    relabelled = tuple(labels[perm.index(w)] for w in range(n))
                    forms.append((moved, relabelled))
                classes.add((n, min(forms)))
    return len(classes)


def test_stable_graph_counts_from_the_definition():
    assert stable_graphs_by_brute_force(2) == 2  # the theta graph and the dumbbell
    assert stable_graphs_by_brute_force(3) == 9
    assert stable_graphs_by_brute_force(8) == 114
    with Store(":memory:") as store:  # the shipped problem asks for exactly these values
        import_demo_problems(store)
        assert [s.answer for s in get_problem(store, "stable-graphs").subquestions][:2] == ["9", "114"]
