"""Admin pages over the whole store: statistics with their intervals and charts, exports, the user list.

The figures are the ``improof stats`` document (:func:`theorembench.methods.improof.stats_load.improof_stats`):
nothing is recomputed here, only formatted. The document is kept per app and made again when the
answers, verdicts, overrides or grades change. Charts are the report's SVGs, served from our own
route as images. CSV exports defuse formula cells (:mod:`theorembench.web.csv_safe`).

Grades changed after their grader saw the model names (corrections) are left out of every figure; the page
says how many there are, ``stats.json`` has them under ``grade_corrections``, and ``grades.csv`` lists them
as rows of their own with ``after_reveal`` true, beside the grades that count (``after_reveal`` false).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

from theorembench.common.errors import UserError
from theorembench.methods.improof import answers as answers_mod
from theorembench.methods.improof import grades as grades_mod
from theorembench.methods.improof.grades import INDICATORS
from theorembench.methods.improof.stats import INDICATOR_LABELS, PROGRESS_LEVELS
from theorembench.methods.improof.stats_load import answer_row, improof_stats
from theorembench.methods.improof.stats_report import charts, coefficient, corr, pct, sigma_text
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo
from theorembench.store.reviews import user_emails, users_with_roles
from theorembench.web.context import Ctx, PageError, guard, page
from theorembench.web.csv_safe import csv_text

EXPORTS = ("grades.csv", "answers.csv", "stats.json")
_lock = threading.Lock()


def fingerprint(store: Store) -> tuple[Any, ...]:
    """Counts and latest times of everything the statistics read: equal fingerprints, equal figures."""
    return ImproofRepo(store).fingerprint()


def stats_doc(app: FastAPI) -> dict[str, Any] | None:
    """The statistics document of the app's store (None when it holds no answers), made again after changes."""
    store: Store = app.state.store
    key = fingerprint(store)
    cached = getattr(app.state, "stats_cache", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    with _lock:
        try:
            doc: dict[str, Any] | None = improof_stats(store).doc
        except UserError:
            doc = None
        app.state.stats_cache = (key, doc)
    return doc


NO_SCORES = "no auto-graded answers yet (n=0)"
NO_GRADES = "no complete grades yet (n=0)"
GRADED_AND_SCORED = "grades of auto-graded answers"


def _mean_progress(block: dict[str, Any]) -> str:
    if block.get("value") is None:
        return NO_GRADES
    low, high = block["ci95"]
    return f"{block['value']:.2f} [{low:.2f}–{high:.2f}] n={block['questions']} questions"


def model_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per model, the figures as the page shows them (value, 95% interval, n)."""
    rows = []
    for name, m in doc["models"].items():
        s, dist = m["subquestions"], m["progress"]
        indicators = [{"name": ind, "label": INDICATOR_LABELS[ind],
                       "true": pct(m["indicators"][ind]["rates"]["true"], count=m["indicators"][ind]["counts"]["true"],
                                   missing=NO_GRADES),
                       "na": m["indicators"][ind]["counts"]["na"]} for ind in INDICATORS]  # fmt: skip
        rows.append({"model": name, "answers": s["answers"] + s["unscored"], "unscored": s["unscored"],
                     "score": pct(s["score"], missing=NO_SCORES), "all_correct": pct(s["all_correct"], missing=NO_SCORES),
                     "sigma": sigma_text(s["runs"]),
                     "mean_progress": _mean_progress(m["mean_progress"]), "grades": m["grades"]["complete"],
                     "left_out": m["grades"]["left_out"],
                     "progress_counts": [dist["counts"][str(k)] for k in PROGRESS_LEVELS],
                     "pearson": corr(m["correlations"]["pearson_score_progress"], GRADED_AND_SCORED),
                     "indicators": indicators})
    return rows


def agreement_rows(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Inter-grader agreement as the page shows it; None before any answer has two complete grades."""
    a = doc.get("agreement") or {}
    if not a.get("pairs"):
        return None
    p, r = a["progress"], a["reliability"]
    rows = [("Progress, exact", f"{p['exact']}/{p['pairs']}", pct(p["exact_rate"], count=p["exact"])),
            ("Progress, within one point", f"{p['within_one']}/{p['pairs']}",
             pct(p["within_one_rate"], count=p["within_one"]))]  # fmt: skip
    for ind in INDICATORS:
        b = a["indicators"][ind]
        rows.append((b["label"], f"{b['agreed']}/{b['pairs']}", pct(b["rate"], count=b["agreed"])))
    return {"pairs": a["pairs"], "answers": a["answers"], "graders": a["graders"], "rows": rows,
            "kappa_linear": coefficient(r["kappa_linear"]), "kappa_quadratic": coefficient(r["kappa_quadratic"]),
            "alpha_progress": coefficient(r["alpha_progress"], "answers")}  # fmt: skip


def grades_csv(store: Store) -> str:
    """Every grade with its answer's question and model, then every correction (``after_reveal`` true: made after
    the grader saw the model names, left out of the statistics); graders named by email where they are platform
    users (the grading page saves grades under the grader's email; other tools may have used the user id)."""
    answers = {a["id"]: a for a in answers_mod.list_answers(store)}
    emails = user_emails(store)
    emails.update({email: email for email in list(emails.values())})
    header = ["answer_id", "problem_id", "version", "model", "mode", "epoch", "grader", "grader_email", "status",
              "progress", *INDICATORS, "comment", "notes", "revision", "updated_at", "after_reveal"]  # fmt: skip
    rows = []
    for after, found in ((False, grades_mod.list_grades(store)), (True, grades_mod.list_corrections(store))):
        for g in found:
            a = answers.get(g.answer_id, {})
            rows.append([g.answer_id, a.get("problem_id"), a.get("version"), a.get("model"), a.get("mode"),
                         a.get("epoch"), g.grader, emails.get(g.grader, ""), g.status, g.progress,
                         *(g.indicators.get(i, "") for i in INDICATORS), g.comment, g.notes, g.revision,
                         g.updated_at, "true" if after else "false"])  # fmt: skip
    return csv_text(header, rows)


def answers_csv(store: Store) -> str:
    """Every answer with its weighted subquestion score (empty until every subquestion has a verdict)."""
    header = ["answer_id", "run_id", "problem_id", "version", "model", "mode", "epoch", "tier", "score",
              "all_correct", "subquestions", "sub_answers", "main_answer", "created_at"]  # fmt: skip
    rows = []
    for a in answers_mod.list_answers(store):
        r = answer_row(store, a)
        rows.append([a["id"], a.get("run_id"), a["problem_id"], a["version"], a["model"], a["mode"], a["epoch"],
                     a.get("tier"), r["score"], r["all_correct"], r["subquestions"],
                     json.dumps(a.get("sub_answers") or [], ensure_ascii=False), a.get("main_answer"),
                     a["created_at"]])  # fmt: skip
    return csv_text(header, rows)


def register(app: FastAPI) -> None:
    """Add the statistics, export and user pages to ``app``."""

    @app.get("/admin/stats", response_class=HTMLResponse)
    def admin_stats(ctx: Ctx = guard("admin_stats")) -> HTMLResponse:
        doc = stats_doc(ctx.request.app)
        if doc is None:
            return page(ctx, "admin_stats.html", doc=None, exports=EXPORTS)
        overall = corr(doc["overall"]["correlations"]["pearson_score_progress"], GRADED_AND_SCORED)
        return page(ctx, "admin_stats.html", doc=doc, counts=doc["counts"], models=model_rows(doc),
                    corrections=doc.get("grade_corrections") or {"grades": 0, "revisions": 0},
                    agreement=agreement_rows(doc), overall=overall, charts=sorted(charts(doc)),
                    exports=EXPORTS)  # fmt: skip

    @app.get("/admin/stats/charts/{name}")
    def admin_stats_chart(name: str, ctx: Ctx = guard("admin_stats")) -> Response:
        doc = stats_doc(ctx.request.app)
        svgs = charts(doc) if doc is not None else {}
        if name not in svgs:
            raise PageError(404, "Not found", "There is no such chart.")
        return Response(svgs[name], media_type="image/svg+xml", headers={"cache-control": "no-store"})

    @app.get("/admin/export/{name}")
    def admin_export(name: str, ctx: Ctx = guard("admin_export")) -> Response:
        store = ctx.repo.store
        if name == "stats.json":
            doc = stats_doc(ctx.request.app)
            if doc is None:
                raise PageError(404, "No statistics yet", "The store holds no answers yet.")
            body, kind = json.dumps(doc, ensure_ascii=False, indent=2) + "\n", "application/json"
        elif name == "grades.csv":
            body, kind = grades_csv(store), "text/csv; charset=utf-8"
        elif name == "answers.csv":
            body, kind = answers_csv(store), "text/csv; charset=utf-8"
        else:
            raise PageError(404, "Not found", "There is no such export.")
        return Response(body, media_type=kind, headers={"content-disposition": f'attachment; filename="{name}"',
                                                        "cache-control": "no-store"})  # fmt: skip

    @app.get("/admin/users", response_class=HTMLResponse)
    def admin_users(ctx: Ctx = guard("admin_users")) -> HTMLResponse:
        return page(ctx, "admin_users.html", users=users_with_roles(ctx.repo.store))
