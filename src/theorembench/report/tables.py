"""Terminal tables and a Markdown report for MCQ results.

Every accuracy is shown with its 95% interval and sample size, ``55.2% [37.6–71.6] n=29``:
on a split of a few dozen items the interval is some ±18 points wide, and a reader must
see that before comparing two numbers. Results files written before intervals were
stored get theirs computed here (Wilson, from correct and total).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from theorembench.common.outputs import write_text
from theorembench.common.stats import Estimate, proportion, quote


def _estimate(block: dict[str, Any]) -> Estimate:
    """A breakdown block (correct, total, and its stored estimate when the file has one) as an estimate."""
    est = proportion(int(block["correct"]), int(block["total"]))
    stored = Estimate.from_dict(block) if block.get("ci95") else None
    if stored is not None:
        est = replace(stored, value=est.value, n=est.n)
    return est


def _pct(block: dict[str, Any]) -> str:
    """``55.2% [37.6–71.6] n=29``."""
    return quote(_estimate(block))


def _gain(g: dict[str, Any]) -> str:
    """``+3.4 pp [−10.3, +17.2] n=29`` (the interval only when the results file has one)."""
    text = f"{g['gain_pp']:+.1f} pp"
    if g.get("ci95_pp"):
        low, high = g["ci95_pp"]
        text += f" [{low:+.1f}, {high:+.1f}] n={g.get('n', '?')}"
    return text


def _mean_at_n(summary: dict[str, Any]) -> str | None:
    m = summary.get("mean_at_n")
    if not m or m.get("value") is None:
        return None
    return f"{quote(m)} ({m.get('samples_per_item')} samples per item)"


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def summary_tables(output: dict[str, Any]) -> list[Table]:
    info, summary = output["test_info"], output["summary"]
    mode = "with sketch" if info.get("sketch") else "without sketch"
    head = Table(title=escape(f"{info['model']} on {info.get('file', '')} ({mode})"), title_justify="left",
                 box=box.SIMPLE_HEAD)
    for col in ("accuracy [95% CI]", "correct", "unparsed", "errors", "out tok", "calls (cached)", "cost"):
        head.add_column(col, justify="right", no_wrap=col.startswith("accuracy") or col == "cost")
    a = summary["all"]
    calls = f"{summary.get('calls_made', '')} ({summary.get('cache_hits', '')})"
    head.add_row(
        _pct(a), f"{a['correct']} / {a['total']}", str(summary["unparsed"]), str(summary["errors"]),
        f"{summary['mean_completion_tokens']:.0f}", calls, _money(summary.get("cost_usd")),
    )  # fmt: skip
    tables = [head]
    mean = _mean_at_n(summary)
    if mean:
        t = Table(title="first-sample accuracy (above) and mean@n", title_justify="left")
        t.add_column("mean@n [95% CI]", justify="right")
        t.add_row(mean)
        tables.append(t)
    for key, title in (("by_theorem_type", "logical category"), ("by_choice_style", "choice style"),
                       ("by_month", "month")):  # fmt: skip
        groups = summary.get(key) or {}
        if not groups:
            continue
        t = Table(title=f"accuracy by {title}", title_justify="left")
        t.add_column(title)
        t.add_column("correct / total", justify="right")
        t.add_column("accuracy [95% CI]", justify="right")
        gain = (summary.get("sketch_gain") or {}).get(key, {})
        if gain:
            t.add_column("sketch gain [95% CI]", justify="right")
        for name, block in groups.items():
            row = [escape(name), f"{block['correct']} / {block['total']}", _pct(block)]
            if gain:
                row.append(_gain(gain[name]) if name in gain else "")
            t.add_row(*row)
        tables.append(t)
    if summary.get("sketch_gain"):
        g = summary["sketch_gain"]["all"]
        t = Table(title="sketch gain (same file, model and settings; items both runs answered)", title_justify="left")
        for col in ("without sketch", "with sketch", "gain [95% CI, paired]"):
            t.add_column(col, justify="right")
        t.add_row(f"{100 * g['without_sketch']:.1f}%", f"{100 * g['with_sketch']:.1f}%", _gain(g))
        tables.append(t)
    return tables


def print_summary(output: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    for table in summary_tables(output):
        console.print(table)


def write_report(output: dict[str, Any], out_dir: Path, *, json_path: str, log_path: str | None) -> Path:
    """report.md plus SVG charts of accuracy by logical category and by choice style."""
    from theorembench.report.charts import accuracy_bars

    out_dir.mkdir(parents=True, exist_ok=True)
    charts = {}
    summary = output["summary"]
    for key, title, name in (("by_theorem_type", "Accuracy by logical category", "accuracy_by_category.svg"),
                             ("by_choice_style", "Accuracy by choice style", "accuracy_by_choice_style.svg")):  # fmt: skip
        if summary.get(key):
            write_text(out_dir / name, accuracy_bars(summary[key], title=f"{title}: {output['test_info']['model']}"))
            charts[key] = name
    path = out_dir / "report.md"
    write_text(path, markdown_report(output, json_path=json_path, log_path=log_path, charts=charts))
    return path


def markdown_report(
    output: dict[str, Any], *, json_path: str, log_path: str | None, charts: dict[str, str] | None = None
) -> str:
    info, summary = output["test_info"], output["summary"]
    a = summary["all"]
    lines = [
        f"# theorembench MCQ report: {info['model']}",
        "",
        f"- file: `{info.get('file')}` ({info['total_tested']} of {info['total_candidates']} items, "
        f"month {info['month']})",
        f"- mode: {'sketch-aware (Mode 2)' if info.get('sketch') else 'selection (Mode 1)'}, "
        f"seed {info['seed']}, {info['n_samples']} sample(s) per item, prompt style {info.get('prompt_style')}",
        f"- accuracy: **{a['correct']} / {a['total']} = {_pct(a)}** (95% interval, {_estimate(a).points()}; "
        f"random guessing: 20%); unparsed replies: {summary['unparsed']}; errors: {summary['errors']}",
        f"- mean completion tokens: {summary['mean_completion_tokens']:.0f}; cost: {_money(summary.get('cost_usd'))}",
        f"- results JSON: `{json_path}`" + (f"; Inspect log: `{log_path}` (open with `inspect view`)" if log_path else ""),
    ]
    if _mean_at_n(summary):
        lines.append(f"- mean@n (all samples): {_mean_at_n(summary)}; the accuracy above is the first sample's")
    if summary.get("sketch_gain"):
        g = summary["sketch_gain"]["all"]
        lines.append(f"- sketch gain over the {g.get('n', '?')} items both runs answered: {_gain(g)}")
    lines.append("")
    for key, title in (("by_theorem_type", "Logical category"), ("by_choice_style", "Choice style"),
                       ("by_month", "Month")):  # fmt: skip
        groups = summary.get(key) or {}
        if not groups:
            continue
        lines += [f"## {title}", ""]
        if charts and key in charts:
            lines += [f"![{title}]({charts[key]})", ""]
        lines += [f"| {title.lower()} | correct | total | accuracy [95% CI] |", "|---|---:|---:|---:|"]
        for name, block in groups.items():
            lines.append(f"| {name} | {block['correct']} | {block['total']} | {_pct(block)} |")
        lines.append("")
    lines += ["## Items", "", "| id | keyed | answered | correct | status |", "|---|---|---|---|---|"]
    for rec in output["detailed_results"]:
        lines.append(
            f"| {rec['id']} | {rec['correct_answer']} | {rec['model_answer'] or '—'} | "
            f"{'yes' if rec['is_correct'] else 'no'} | {rec.get('status', '')} |"
        )
    lines.append("")
    return "\n".join(lines)


def comparison_table(outputs: list[tuple[Path, dict[str, Any]]]) -> tuple[Table, str]:
    """One row per results file: overall, original and substitution-resistant accuracy, tokens, cost."""
    cols = ("file", "model", "mode", "items", "acc [95% CI]", "original", "subst.-resistant", "unparsed", "errors",
            "mean out tok", "cost")  # fmt: skip
    table = Table(title="runs compared", title_justify="left")
    for col in cols:
        table.add_column(col, justify="left" if col in ("file", "model", "mode") else "right")
    md = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for path, data in outputs:
        info, summary = data["test_info"], data["summary"]
        styles = summary.get("by_choice_style", {})
        row = [
            path.name, str(info.get("model")), "sketch" if info.get("sketch") else "plain",
            str(summary["all"]["total"]), _pct(summary["all"]),
            _pct(styles["original"]) if "original" in styles else "",
            _pct(styles["substitution_resistant"]) if "substitution_resistant" in styles else "",
            str(summary.get("unparsed", "")), str(summary.get("errors", "")),
            f"{summary.get('mean_completion_tokens', 0):.0f}", _money(summary.get("cost_usd")),
        ]  # fmt: skip
        table.add_row(*(escape(cell) for cell in row))
        md.append("| " + " | ".join(row) + " |")
    return table, "\n".join(md) + "\n"
