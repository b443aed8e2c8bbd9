"""``theorembench report`` and ``theorembench prices``: results as tables and charts; the price table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import call, fail, out
from theorembench.common.outputs import write_text


def report(
    results: Annotated[list[Path], typer.Argument(help="Results JSON files written by `theorembench eval mcq`.")],
    out_dir: Annotated[Path | None, typer.Option("--out-dir", help="Also write report.md and SVG charts here (one file: that run; several: a comparison).")] = None,
) -> None:
    """Show results files as tables; compare several runs side by side."""
    from theorembench.report.tables import comparison_table, print_summary, write_report

    outputs = []
    for path in results:
        try:
            data = json.loads(path.read_text())
            data["summary"]["all"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise fail(f"{path}: not a theorembench results file ({exc.__class__.__name__})") from None
        outputs.append((path, data))
    if len(outputs) == 1:
        path, data = outputs[0]
        print_summary(data, out)
        if out_dir:
            out.print(f"report: {write_report(data, out_dir, json_path=str(path), log_path=None)}", markup=False)
        return
    table, markdown = comparison_table(outputs)
    out.print(table)
    if out_dir:
        out.print(f"report: {write_text(out_dir / 'comparison.md', markdown)}", markup=False)


def prices() -> None:
    """Show the price table (USD per million tokens) and the files it was read from."""
    from theorembench.llm.pricing import PriceTable, user_price_file

    table_data = call(PriceTable.load)
    table = Table("model pattern", "input", "output", "cached input")
    for name, p in sorted(table_data.prices.items()):
        table.add_row(name, f"{p.input:g}", f"{p.output:g}", "" if p.cached_input is None else f"{p.cached_input:g}")
    out.print(table)
    out.print(f"sources: {', '.join(table_data.sources)}; your overrides go in {user_price_file()}", markup=False)
