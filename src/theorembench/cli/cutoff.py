"""The contamination guard's options, shared by every evaluation command, and the lines that report it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from theorembench.cli.common import err, out
from theorembench.common.stats import quote

CutoffGuardOption = Annotated[
    str | None,
    typer.Option("--cutoff-guard", metavar="exclude|flag|off",
                 help="Contamination guard by the model's training-data cutoff (built-in registry plus "
                      "--models-file). exclude: ask and score only items whose source paper was first published "
                      "strictly after the cutoff (undated items are not scored); flag: score every item and report "
                      "the items before and after the cutoff apart, each with its own n and interval; off: no "
                      "guard. Default: exclude for items of a release (a folder with manifest.json), flag for a "
                      "plain file. A model not in the registry is evaluated on every item, with a warning."),
]  # fmt: skip

ModelsFileOption = Annotated[
    Path | None,
    typer.Option("--models-file", help="A TOML file of model release dates and cutoffs (the built-in "
                                       "model_cutoffs.toml's format) that adds to or overrides the registry; "
                                       "also $THEOREMBENCH_MODELS_FILE."),
]  # fmt: skip


def report_cutoff(block: dict[str, Any] | None) -> None:
    """The guard's warnings on stderr, and one line saying which items counted."""
    if not block:
        return
    for warning in block.get("warnings") or []:
        err.print(f"warning: {warning}", markup=False, highlight=False)
    if block.get("guard") == "off":
        return
    cutoff = block.get("cutoff")
    where = f"cutoff {cutoff} ({block.get('basis')}, {block.get('source')})" if cutoff else "cutoff unknown"
    line = (f"cutoff guard {block['guard']}: {block.get('model')}, {where}: {len(block.get('counted') or [])} "
            f"counted, {len(block.get('excluded') or [])} excluded, {len(block.get('unknown') or [])} undated")
    out.print(line, markup=False, highlight=False)
    for name, est in (block.get("subsets") or {}).items():
        out.print(f"  {name} the cutoff: {quote(est)}" if name != "unknown" else f"  undated: {quote(est)}",
                  markup=False, highlight=False)  # fmt: skip


__all__ = ["CutoffGuardOption", "ModelsFileOption", "report_cutoff"]
