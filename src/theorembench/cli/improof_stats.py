"""``theorembench improof stats``: per-model scores, progress and indicators, and inter-rater agreement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, opened_store, out, plain
from theorembench.cli.improof_app import improof_app


@improof_app.command("stats")
def improof_stats_cmd(
    run: Annotated[list[str] | None, typer.Option("--run", help="Only answers of this run (repeatable).")] = None,
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="Only this model (repeatable).")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for stats.json, report.md and the SVG charts.")] = Path(
        "improof_stats"),
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics document as JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Scores with σ(M) and bootstrap intervals, progress, indicators, correlations, usage and grader agreement."""
    from theorembench.methods.improof.stats_load import improof_stats

    with opened_store(db) as st:
        result = improof_stats(st, run_ids=run or None, models=model or None, out_dir=out_dir)
    if as_json:
        typer.echo(json.dumps(result.doc, ensure_ascii=False, indent=1))
        return
    print_stats(result.doc)
    out.print(plain(f"report: {result.paths['report']} (stats.json and the SVG charts beside it)"))


def print_stats(doc: dict[str, Any]) -> None:
    """The statistics document as Rich tables."""
    from theorembench.methods.improof.stats import INDICATOR_LABELS, INDICATORS, PROGRESS_LEVELS
    from theorembench.methods.improof.stats_report import pct, sigma_text

    models = doc["models"]
    c = doc["counts"]
    scores = Table("model", "answers", "subquestion score [95% CI] n questions", "σ(M) (App. I.3)",
                   "all subquestions right", title=plain(f"IMProofBench: {c['answers']} answers, {c['problems']} "
                   f"problems, {c['grades']} complete grades"), title_justify="left")  # fmt: skip
    for name, m in models.items():
        s = m["subquestions"]
        scores.add_row(plain(name), str(s["answers"] + s["unscored"]), pct(s["score"]), sigma_text(s["runs"]),
                       pct(s["all_correct"]))  # fmt: skip
    out.print(scores)
    progress = Table("model", "grades", *(f"{k}/3" for k in PROGRESS_LEVELS), "mean progress [95% CI]",
                     title="progress grades", title_justify="left")  # fmt: skip
    for name, m in models.items():
        d, mp = m["progress"], m["mean_progress"]
        mean = "n=0" if mp["value"] is None else f"{mp['value']:.2f} [{mp['ci95'][0]:.2f}–{mp['ci95'][1]:.2f}]"
        progress.add_row(plain(name), str(d["n"]), *(str(d["counts"][str(k)]) for k in PROGRESS_LEVELS), mean)
    out.print(progress)
    names = list(models)
    indicators = Table("indicator (share marked true)", title="indicators", title_justify="left")
    for n in names:
        indicators.add_column(plain(n))
    for ind in INDICATORS:
        blocks = [models[n]["indicators"][ind] for n in names]
        indicators.add_row(INDICATOR_LABELS[ind], *(pct(b["rates"]["true"], count=b["counts"]["true"]) for b in blocks))
    out.print(indicators)
    _correlations_and_usage(doc)
    _agreement(doc.get("agreement") or {})


def _correlations_and_usage(doc: dict[str, Any]) -> None:
    from theorembench.methods.improof.stats_report import corr

    table = Table("model", "Pearson r (score, progress)", "φ (all right, 3/3)", title="subquestions vs progress",
                  title_justify="left")  # fmt: skip
    rows = list(doc["models"].items()) + [("all models", {"correlations": doc["overall"]["correlations"]})]
    for name, m in rows:
        cr = m["correlations"]
        table.add_row(plain(name), corr(cr["pearson_score_progress"]), corr(cr["phi_all_right_full"]))
    out.print(table)
    usage = Table("model", "answers", "stages", "outcomes", "output tok/answer", "reasoning tok/answer",
                  "tool calls/answer", "tool calls", title="tool and token usage", title_justify="left")  # fmt: skip
    for name, m in doc["models"].items():
        u = m["usage"]
        pa = u["per_answer"]
        usage.add_row(plain(name), str(u["answers"]), str(u["stages"]),
                      plain(", ".join(f"{k} {v}" for k, v in u["outcomes"].items()) or "—"),
                      str(pa["output_tokens"]), str(pa["reasoning_tokens"]), str(pa["tool_calls"]),
                      plain(", ".join(f"{k} {v}" for k, v in u["tool_calls"].items()) or "—"))  # fmt: skip
    out.print(usage)


def _agreement(a: dict[str, Any]) -> None:
    from theorembench.methods.improof.stats import INDICATORS
    from theorembench.methods.improof.stats_report import coefficient, pct

    if not a.get("pairs"):
        out.print("inter-rater agreement: no answer has two complete grades yet")
        return
    p = a["progress"]
    table = Table("comparison", "agreed / pairs", "rate [95% CI] n", "left out (N/A)",
                  title=f"inter-rater agreement: {a['answers']} answers, {a['graders']} graders, {a['pairs']} pairs",
                  title_justify="left")  # fmt: skip
    table.add_row("progress, exact", f"{p['exact']}/{p['pairs']}", pct(p["exact_rate"], count=p["exact"]), "")
    table.add_row("progress, within one", f"{p['within_one']}/{p['pairs']}",
                  pct(p["within_one_rate"], count=p["within_one"]), "")
    for ind in INDICATORS:
        b = a["indicators"][ind]
        table.add_row(b["label"], f"{b['agreed']}/{b['pairs']}", pct(b["rate"], count=b["agreed"]),
                      str(b["left_out_na"] or ""))
    out.print(table)
    q = a["per_question"]
    bands = ", ".join(f"{name} {b['questions']}" for name, b in q["bands"].items())
    out.print(plain(f"per question ({q['n']}): {bands} (high ≥ 80%, moderate 60–80%, low < 60%)"))
    r = a["reliability"]
    coef = Table("coefficient", "value [95% CI] n", title="chance-corrected agreement", title_justify="left")
    coef.add_row("Cohen's κ, linear weights (progress)", coefficient(r["kappa_linear"]))
    coef.add_row("Cohen's κ, quadratic weights (progress)", coefficient(r["kappa_quadratic"]))
    coef.add_row("Krippendorff's α, ordinal (progress)", coefficient(r["alpha_progress"]))
    for ind in INDICATORS:
        block = r["alpha_indicators"][ind]
        coef.add_row(f"Krippendorff's α, nominal ({block['label']})", coefficient(block))
    out.print(coef)


__all__ = ["improof_stats_cmd", "print_stats"]
