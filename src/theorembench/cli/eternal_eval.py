"""``theorembench eternal calibrate | eval | report | taxonomy | audit``: tiers, scores, error labels, human audit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, MergeShardsOption, ShardOption, call, opened_store, out, plain, progress
from theorembench.cli.costs import with_cost_options
from theorembench.cli.cutoff import CutoffGuardOption, ModelsFileOption, report_cutoff
from theorembench.cli.eternal_app import eternal_app

taxonomy_app = typer.Typer(help="Error-category labels of failed responses: export for a person, import overrides.",
                           no_args_is_help=True)  # fmt: skip
audit_app = typer.Typer(help="Human audit: a blind sample for experts, and the precision of their verdicts.",
                        no_args_is_help=True)  # fmt: skip
eternal_app.add_typer(taxonomy_app, name="taxonomy")
eternal_app.add_typer(audit_app, name="audit")

MaxTokens = Annotated[int | None, typer.Option("--max-tokens", help="Cap on each reply's tokens (default: the provider's).")]
Temperature = Annotated[float | None, typer.Option("--temperature", help="Sampling temperature (default: the provider's).")]
Seed = Annotated[int | None, typer.Option("--seed", help="Sampling seed; sample k uses seed + k.")]
Connections = Annotated[int | None, typer.Option("--max-connections", help="Concurrent requests per model.")]
Effort = Annotated[str | None, typer.Option("--reasoning-effort", help="Reasoning effort of every model: none, minimal, low, medium, high or xhigh (a model named model@high gets its own).")]
Budget = Annotated[int | None, typer.Option("--thinking-budget", help="Tokens a model may spend thinking (Anthropic, Google).")]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Seconds each request attempt may take (default: the provider client's).")]


def _bar(label: str) -> tuple[Any, Any]:
    bar = progress(label)
    task = bar.add_task(label, total=0)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, update


@eternal_app.command("calibrate")
@with_cost_options("eternal calibrate", outputs={"out_dir": "eternal_calibration"})
def eternal_calibrate(
    file: Annotated[Path, typer.Argument(help="instances.jsonl (from `eternal instantiate` or `eternal build`).")],
    suite: Annotated[list[str], typer.Option("--suite", help="A model of the calibration suite (repeat: the paper uses five); model@high or model@xhigh runs it at that reasoning effort, as the paper's GPT-5.1-high.")],
    trials: Annotated[int, typer.Option("--trials", help="Answers per model per instance (K).")] = 3,
    rule: Annotated[str, typer.Option("--rule", help="When a model counts as correct: majority (more than half of its K trials), any, all or at_least:k.")] = "majority",
    exclude: Annotated[str, typer.Option("--exclude", help="all_trials (the paper: drop an instance every model answered right in every trial) or rule (drop one every model gets right by --rule: also drops an instance one model missed once).")] = "all_trials",
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for calibrated.jsonl, excluded.jsonl, trials.jsonl, calibration.json.")] = Path("eternal_calibration"),
    max_tokens: MaxTokens = None,
    temperature: Temperature = None,
    seed: Seed = None,
    max_connections: Connections = None,
    reasoning_effort: Effort = None,
    thinking_budget: Budget = None,
    timeout: Timeout = None,
    db: DbOption = None,
) -> None:
    """Answer every instance K times with every suite model, exclude those all solve, tier the rest (resumable)."""
    from theorembench.methods.eternal.calibrate import calibrate

    bar, update = _bar("eternal calibrate")
    with opened_store(db) as st, bar:
        result = calibrate(st, file, suite, trials, rule=rule, exclusion=exclude, out_dir=out_dir, progress=update,
                           max_tokens=max_tokens, temperature=temperature, seed=seed, max_connections=max_connections,
                           reasoning_effort=reasoning_effort, thinking_budget=thinking_budget,
                           timeout=timeout)  # fmt: skip
    s = result.summary
    ranges = s["thresholds"]
    table = Table("tier", "models correct", "instances", "share", title=plain(
        f"EternalMath tiers: {s['suite_size']} models, {s['trials']} trials each, rule {s['rule']}"), title_justify="left")
    for tier in ("easy", "medium", "hard"):
        row = s["table"]["tiers"][tier]
        share = "" if row["share"] is None else f"{100 * row['share']:.1f}%"
        table.add_row(tier, _span(ranges[tier]), str(row["n"]), share)
    short = {"all_trials": "(all trials right)", "rule": "(all correct by the rule)"}.get(s["exclusion"], "")
    table.add_row("excluded", _span(ranges["excluded"]), str(s["table"]["excluded"]), short)
    out.print(table)
    out.print(plain(f"excluded: {s['excluded_because']}"))
    models = Table("model", "trials answered", "trials correct", "instances correct", title="per model",
                   title_justify="left")  # fmt: skip
    for name, m in s["per_model"].items():
        models.add_row(plain(name), str(m["trials"]), str(m["correct_trials"]), str(m["instances_correct"]))
    out.print(models)
    refused = result.summary.get("refused_trials", 0)
    if refused:
        out.print(f"{refused} trials were refused for good (a client error such as a too long prompt): counted as "
                  "not correct.")  # fmt: skip
    if result.failed_trials - refused:
        out.print(f"{result.failed_trials - refused} trials failed transiently (not outcomes yet): "
                  f"{len(result.pending)} instances pending. Run the same command again to retry them.")  # fmt: skip
    out.print(plain(f"model calls: {result.calls_made} made, {result.cache_hits} from the cache"))
    out.print(plain(f"calibrated: {result.files['calibrated']} (+ excluded.jsonl, trials.jsonl, calibration.json)"))


def _span(values: list[int]) -> str:
    if not values:
        return "none"
    return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"


@eternal_app.command("eval")
@with_cost_options("eternal eval", outputs={"out_dir": "eternal_eval", "log_dir": "logs"})
def eternal_eval(
    file: Annotated[Path, typer.Argument(help="calibrated.jsonl (or any instances file; no tier: untiered).")],
    model: Annotated[str, typer.Option("--model", "-m", help="Model to evaluate; model@xhigh runs it at that reasoning effort (the paper's GPT-5.2-xhigh).")],
    n: Annotated[int, typer.Option("--n", help="Samples per instance (n > 1: mean@n with a bootstrap interval).")] = 1,
    judge: Annotated[str | None, typer.Option("--judge", help="Judge model that labels each wrong answer with the Table 4 error categories.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for results_<model>.json and report.md (shared by models).")] = Path("eternal_eval"),
    max_tokens: MaxTokens = None,
    temperature: Temperature = None,
    seed: Seed = None,
    max_connections: Connections = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Inspect log folder (default ./logs).")] = None,
    reasoning_effort: Effort = None,
    thinking_budget: Budget = None,
    timeout: Timeout = None,
    corpus: Annotated[list[Path] | None, typer.Option("--corpus", help="Known problems (one a line, or JSONL) the instances' originality is measured against, for the radar's D6 (repeatable).")] = None,
    cutoff_guard: CutoffGuardOption = None,
    models_file: ModelsFileOption = None,
    shard: ShardOption = None,
    merge_shards: MergeShardsOption = None,
    db: DbOption = None,
) -> None:
    """Score a model by final answers: accuracy per tier and MSC class with 95% intervals; taxonomy; report."""
    from theorembench.methods.eternal.evaluate import evaluate_eternal

    bar, update = _bar("eternal eval")
    with opened_store(db) as st, bar:
        result = evaluate_eternal(st, file, model, n=n, judge=judge, out_dir=out_dir, max_tokens=max_tokens,
                                  temperature=temperature, seed=seed, max_connections=max_connections,
                                  log_dir=log_dir, progress=update, reasoning_effort=reasoning_effort,
                                  thinking_budget=thinking_budget, timeout=timeout,
                                  corpora=[str(c) for c in corpus or []], cutoff_guard_mode=cutoff_guard,
                                  models_file=models_file, shard=shard, merge_shards=merge_shards)  # fmt: skip
    if "shard" in result.detail:
        from theorembench.cli.eval import report_shard

        report_shard(result)
        return
    print_results(result.results)
    report_cutoff(result.detail.get("cutoff"))
    out.print(plain(f"results: {result.path}"))
    out.print(plain(f"report: {result.files['report']}"))
    if result.log:
        out.print(plain(f"inspect log: {result.log}"))


def print_results(doc: dict[str, Any]) -> None:
    """Accuracy per tier and per MSC class, and the taxonomy counts, as tables with intervals."""
    from theorembench.methods.eternal.report import cell

    s = doc["summary"]
    what = "accuracy" if s["samples_per_item"] == 1 else f"mean@{s['samples_per_item']}"
    table = Table("group", f"{what} [95% CI] n", "share", title=plain(f"EternalMath: {doc['model']}"),
                  title_justify="left")  # fmt: skip
    table.add_row("all", cell(s["overall"]), "")
    for tier, b in s["by_tier"].items():
        table.add_row(tier, cell(b), f"{100 * s['tier_share'][tier]['share']:.1f}%")
    out.print(table)
    msc = Table("MSC class", f"{what} [95% CI] n", title="by MSC class", title_justify="left")
    for code, b in s["by_msc"].items():
        msc.add_row(plain(code), cell(b))
    out.print(msc)
    if s["failed_samples"]:
        out.print(f"{s['failed_samples']} samples have no answer and count as not correct: {s['errors']} refused for "
                  f"good (errors), {s.get('pending', 0)} failed transiently (run again to ask those again). Over "
                  f"answered samples only (secondary): {cell(s['answered_only'])}")  # fmt: skip
    t = doc.get("taxonomy") or {}
    if t.get("labelled"):
        tax = Table("error category", "responses", title=plain(f"error taxonomy ({t['labelled']} of {t['failures']} "
                    f"wrong responses labelled, {t['overridden']} by a person)"), title_justify="left")  # fmt: skip
        for name, count in t["counts"].items():
            tax.add_row(name, str(count))
        out.print(tax)


@eternal_app.command("report")
def eternal_report(
    results: Annotated[list[Path], typer.Argument(help="results_<model>.json files of `eternal eval` (same instances).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for report.md and its SVG charts.")] = Path("eternal_report"),
) -> None:
    """Markdown report over several models: accuracy by tier and MSC class, radar D1–D6, taxonomy counts."""
    from theorembench.methods.eternal.report import load_results, radars, write_report

    docs = call(load_results, results)
    path = call(write_report, docs, out_dir)
    for name, r in radars(docs).items():
        table = Table("indicator", "value", title=f"radar D1–D6 ({name})", title_justify="left")
        for key, label in r["axes"].items():
            value = r["indicators"][key]
            table.add_row(f"{key} {label}", "undefined" if value is None else f"{value:.2f}")
        out.print(table)
        for choice in r["choices"]:
            out.print(plain(f"  {choice}"))
    out.print(plain(f"report: {path}"))


@taxonomy_app.command("export")
def taxonomy_export(
    results: Annotated[Path, typer.Argument(help="A results_<model>.json of `eternal eval`.")],
    to: Annotated[Path, typer.Option("--out", help="labels.csv or labels.json for a person to edit.")],
) -> None:
    """Write the failed responses' labels (judge's or a person's) to CSV or JSON."""
    from theorembench.methods.eternal.report import load_results
    from theorembench.methods.eternal.taxonomy import export_labels

    doc = call(load_results, [results])[0]
    path = call(export_labels, doc["taxonomy"]["labels"], to)
    out.print(plain(f"{len(doc['taxonomy']['labels'])} failed responses: {path}"))


@taxonomy_app.command("import")
def taxonomy_import(
    labels: Annotated[Path, typer.Argument(help="The edited labels file (.csv or .json).")],
    results: Annotated[Path, typer.Option("--results", help="The results_<model>.json the labels belong to.")],
    db: DbOption = None,
) -> None:
    """Store a person's labels as overrides (all rows or none), then rewrite the results and the report."""
    from theorembench.methods.eternal.evaluate import import_taxonomy

    with opened_store(db) as st:
        stored, report = import_taxonomy(st, labels, results)
    out.print(plain(f"{stored} overrides stored; report: {report}"))


@audit_app.command("sample")
def audit_sample_cmd(
    file: Annotated[Path, typer.Argument(help="The instances to audit (calibrated.jsonl or instances.jsonl).")],
    to: Annotated[Path, typer.Option("--out", help="The blind sample: audit.csv or audit.json.")],
    n: Annotated[int, typer.Option("--n", help="Instances to sample.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random draw.")] = 0,
) -> None:
    """Export a blind random sample (problem, answer, solution steps; no model answers, no tier)."""
    from theorembench.methods.eternal.audit import audit_sample

    got = call(audit_sample, file, to, n=n, seed=seed)
    note = "" if got["n"] == n else f" (only {got['available']} instances)"
    out.print(plain(f"{got['n']} instances{note}: {got['sample']}; key (keep it from the experts): {got['key']}"))


@audit_app.command("import")
def audit_import_cmd(
    file: Annotated[Path, typer.Argument(help="The experts' file with a verdict (valid or invalid) per audit id.")],
    key: Annotated[Path | None, typer.Option("--key", help="The sample's key (default <name>.key.json beside it).")] = None,
    to: Annotated[Path | None, typer.Option("--out", help="Write the precision as JSON.")] = None,
) -> None:
    """Precision of the audited instances (valid / judged) with its Wilson 95% interval."""
    from theorembench.common.outputs import write_json
    from theorembench.methods.eternal.audit import audit_import

    got = call(audit_import, file, key=key)
    table = Table("judged", "valid", "invalid", "not judged", "precision [95% CI] n", title="human audit",
                  title_justify="left")  # fmt: skip
    table.add_row(str(got["judged"]), str(got["valid"]), str(got["invalid"]), str(got["unjudged"]), got["shown"])
    out.print(table)
    for iid in got.get("invalid_instances", []):
        out.print(plain(f"invalid: {iid}"))
    if to:
        write_json(to, got)
        out.print(plain(f"precision: {to}"))
