"""``--estimate``, ``--max-cost`` and ``--batch``: the cost options of every command that calls models.

A command runs its service inside :func:`cost_run`::

    with cost_run(costs, db, command="eval mcq", resume_hint="--resume") as run:
        run_the_service(db=run.db, out=run.out(out_path, "results.json"))

* ``--estimate``: the service runs on a scratch copy of the store, with its outputs sent to a scratch
  folder and its own printing held back, under a forecast (:mod:`theorembench.llm.forecast`): no model is
  called and the real store and output folders are not touched. The forecast's table is printed, and its
  JSON written under ``<home>/forecasts/``.
* ``--max-cost USD``: no new model call starts once the dollars spent plus those held by calls in flight
  would pass the cap. The work not done stays pending in the store; the command ends with one line saying
  so and exit status :data:`COST_CAP_EXIT`.
* ``--batch``: requests go to the providers' batch APIs, at their batch price.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table

from theorembench.cli.common import err, fail, out, user_errors
from theorembench.common.paths import home
from theorembench.llm.forecast import Forecast
from theorembench.llm.spending import BATCH_PRICE_FACTOR, Spending, spending
from theorembench.store import open_store
from theorembench.store.snapshot import snapshot_to

T = TypeVar("T")
COST_CAP_EXIT = 75  # EX_TEMPFAIL: stopped at the cost cap, resumable

EstimateOption = Annotated[bool, typer.Option(
    "--estimate", help="Call no model: print the calls, tokens and dollars this command would spend, per stage "
                       "and model (cached calls are free). The store and the output folders are not changed.")]
MaxCostOption = Annotated[float | None, typer.Option(
    "--max-cost", metavar="USD", help="Start no new model call once the dollars spent plus those of the calls in "
                                      "flight would pass USD; the rest stays pending, and a rerun with a higher "
                                      "cap goes on from there.")]
BatchOption = Annotated[bool, typer.Option(
    "--batch", help="Send the requests through the providers' batch APIs (about half price; results can take "
                    "hours): for runs where latency does not matter.")]


@dataclass(frozen=True)
class Costs:
    """The cost options a command was given."""

    estimate: bool = False
    max_cost: float | None = None
    batch: bool = False


@dataclass
class CostRun:
    """Where the service runs: the store it uses and where its outputs go (scratch ones under ``--estimate``)."""

    db: str | Path | None
    scratch: Path | None = None
    policy: Spending = field(default_factory=Spending)

    def out(self, path: Path | None, name: str = "out") -> Path | None:
        """An output path of the command: as given, or (estimating) one in the scratch folder."""
        if self.scratch is None:
            return path
        target = self.scratch / "outputs" / (Path(path).name if path is not None else name)
        if path is not None and Path(path).is_dir() and not target.exists():  # what a build reads back (releases)
            shutil.copytree(path, target)
        elif path is not None and Path(path).is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        return target


@contextlib.contextmanager
def cost_run(costs: Costs, db: str | Path | None, *, command: str, resume_hint: str = "") -> Iterator[CostRun]:
    """Run a command's service under its cost options (see the module's docstring)."""
    if costs.estimate:
        with _estimating(costs, db, command) as run:
            yield run
        return
    with user_errors():
        policy = Spending(max_cost=costs.max_cost, batch=costs.batch)
    run = CostRun(db, policy=policy)
    try:
        with spending(policy):
            yield run
    except (typer.Exit, SystemExit, Exception):
        if policy.cap_reached:
            raise _cap_stop(policy, resume_hint) from None
        raise
    if policy.cap_reached:
        raise _cap_stop(policy, resume_hint)
    if policy.max_cost is not None:
        err.print(f"spent ${policy.spent:.4f} of the ${policy.max_cost:.2f} cap", markup=False)


def _cap_stop(policy: Spending, resume_hint: str) -> typer.Exit:
    again = f"the same command with {resume_hint} and" if resume_hint else "the same command with"
    return fail(f"stopped at the cost cap: spent ${policy.spent:.4f} of ${policy.max_cost:.2f}; "
                f"{policy.calls_refused} model call(s) not started, their work kept pending; rerun {again} "
                "a higher --max-cost to go on", COST_CAP_EXIT)  # fmt: skip


@contextlib.contextmanager
def _estimating(costs: Costs, db: str | Path | None, command: str) -> Iterator[CostRun]:
    scratch = Path(tempfile.mkdtemp(prefix="theorembench-forecast-"))
    forecast = Forecast(price_factor=BATCH_PRICE_FACTOR if costs.batch else 1.0)
    held = io.StringIO()
    saved_log_dir = os.environ.get("INSPECT_LOG_DIR")
    try:
        with user_errors(), open_store(db) as real:
            copy = snapshot_to(real, scratch / "store.db")
        os.environ["INSPECT_LOG_DIR"] = str(scratch / "logs")
        run = CostRun(copy, scratch, Spending(forecast=forecast, batch=costs.batch))
        try:
            with spending(run.policy), contextlib.redirect_stdout(held):
                yield run
        except typer.Exit as exc:
            if exc.exit_code:  # the service stopped on an error of its own: show what it said
                out.print(held.getvalue(), markup=False, end="")
                raise
    finally:
        if saved_log_dir is None:
            os.environ.pop("INSPECT_LOG_DIR", None)
        else:
            os.environ["INSPECT_LOG_DIR"] = saved_log_dir
        shutil.rmtree(scratch, ignore_errors=True)
    path = _save(forecast, command)
    out.print(forecast_table(forecast, command))
    out.print(forecast_notes(forecast), markup=False)
    out.print(f"forecast JSON: {path}", markup=False)


def _save(forecast: Forecast, command: str) -> Path:
    folder = home() / "forecasts"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = folder / f"forecast-{command.replace(' ', '-')}-{stamp}-{os.getpid()}.json"
    path.write_text(json.dumps({"command": command, **forecast.to_json()}, indent=2))
    return path


def _dollars(low: float | None, expected: float | None, high: float | None) -> tuple[str, str]:
    if expected is None:
        return "no price", ""
    return f"${expected:.4f}", f"${low:.4f}–${high:.4f}"


def forecast_table(forecast: Forecast, command: str) -> Table:
    """Per stage and model: calls (cached ones free), input tokens, expected output tokens, dollars and range."""
    title = f"forecast of `theorembench {command}`: no model was called"
    if forecast.price_factor != 1.0:
        title += f" (batch price: x{forecast.price_factor:g})"
    table = Table(title=title, title_justify="left")
    for col in ("stage", "model", "calls", "cached", "in tok", "out tok (expected)", "from", "$ expected",
                "$ low–high"):  # fmt: skip
        table.add_column(col, justify="left" if col in ("stage", "model", "from") else "right")
    for row in forecast.rows():
        made = row.calls - row.cached
        tokens = f"{'' if row.input_exact else '≈'}{row.input_tokens}"
        expected, span = _dollars(row.cost_low, row.cost_expected, row.cost_high)
        table.add_row(row.stage, row.model, str(row.calls), str(row.cached), tokens if made else "0",
                      f"{row.output_expected:.0f}", row.output_from or "-", expected, span)  # fmt: skip
    totals = forecast.totals()
    expected, span = _dollars(totals["cost_low_usd"], totals["cost_expected_usd"], totals["cost_high_usd"])
    table.add_section()
    table.add_row("total", "", str(totals["calls"]), str(totals["cached"]),
                  f"{'' if totals['input_exact'] else '≈'}{totals['input_tokens']}",
                  str(totals["output_tokens_expected"]), "", expected, span)  # fmt: skip
    return table


def forecast_notes(forecast: Forecast) -> str:
    notes = ["cached calls cost nothing."]
    if not forecast.totals()["input_exact"]:
        notes.append("≈: input tokens estimated (4 characters a token; no tokenizer on disk for the model), "
                     "range 0.8–1.25x.")
    if any(r.output_from != "history" for r in forecast.rows() if r.calls > r.cached):
        notes.append("out tok 'cap': no history for that stage and model, so the token cap (a quarter of it "
                     "at the low end); later stages run on stand-in answers and may differ.")
    if any(r.cost_expected is None for r in forecast.rows()):
        notes.append("'no price': add the model to the price table ($THEOREMBENCH_PRICES).")
    return " ".join(notes)


def with_cost_options(command: str, *, outputs: dict[str, str] | None = None,
                      resume_hint: str = "") -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Give a command ``--estimate``, ``--max-cost`` and ``--batch`` and run its body under :func:`cost_run`.

    ``outputs`` names the command's output parameters (each with the file or folder name it takes in the
    scratch folder when it is not given), which ``--estimate`` sends to the scratch folder; the ``db``
    parameter becomes the scratch copy of the store there.
    """
    outputs = outputs or {}

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        signature = inspect.signature(fn, eval_str=True)

        @functools.wraps(fn)
        def command_with_costs(*args: Any, estimate: bool = False, max_cost: float | None = None,
                               batch: bool = False, **kwargs: Any) -> T:  # fmt: skip
            with cost_run(costs_of(estimate, max_cost, batch), kwargs.get("db"), command=command,
                          resume_hint=resume_hint) as run:  # fmt: skip
                kwargs["db"] = run.db
                for name, default in outputs.items():
                    kwargs[name] = run.out(kwargs.get(name), default)
                return fn(*args, **kwargs)

        added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
                 for name, annotation, default in (("estimate", EstimateOption, False),
                                                   ("max_cost", MaxCostOption, None),
                                                   ("batch", BatchOption, False))]  # fmt: skip
        command_with_costs.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*signature.parameters.values(), *added])
        command_with_costs.__annotations__ = {**fn.__annotations__, "estimate": EstimateOption,
                                              "max_cost": MaxCostOption, "batch": BatchOption}  # fmt: skip
        return command_with_costs

    return wrap


def costs_of(estimate: bool, max_cost: float | None, batch: bool) -> Costs:
    """The cost options, checked together."""
    if estimate and max_cost is not None:
        raise fail("--estimate calls no model, so --max-cost has nothing to cap: give one of them")
    return Costs(estimate=estimate, max_cost=max_cost, batch=batch)


__all__ = ["COST_CAP_EXIT", "BatchOption", "CostRun", "Costs", "EstimateOption", "MaxCostOption", "cost_run",
           "costs_of", "forecast_table", "with_cost_options"]

