"""``theorembench release``: build a month's release over every method, retire items, show a release."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, opened_store, out, plain, progress, user_errors
from theorembench.cli.costs import with_cost_options

release_app = typer.Typer(help="Monthly releases: every method's items from a month's papers, with a manifest.",
                          no_args_is_help=True)  # fmt: skip


def print_release(manifest: dict, folder: Path, *, new: bool = True) -> None:
    """The release's id, its per-method counts and what changed against the previous release."""
    state = "new release" if new else "unchanged: the release built before"
    out.print(plain(f"{manifest['release']} ({state}): {folder}"))
    table = Table("method", "items", "public", "private", "retired", title="items", title_justify="left")
    for method, block in manifest["methods"].items():
        c = block["counts"]
        table.add_row(method, str(c["items"]), str(c["public"]), str(c["private"]), str(c["retired"]))
    out.print(table)
    audit = manifest.get("shortcut_audit")
    if audit:
        flagged = ", ".join(audit["flagged"]) or "none"
        out.print(plain(f"shortcut audit (LMB): baselines above chance beyond their interval: {flagged} "
                        f"({audit['file']})"))  # fmt: skip
    withheld = (manifest.get("licences") or {}).get("text_withheld") or []
    if withheld:
        out.print(plain(f"{len(withheld)} item(s) will ship without their paper's text (licence)"))
    ch = manifest.get("changes")
    if ch:
        out.print(plain(f"against {manifest['previous']}: {len(ch['added'])} added, {len(ch['removed'])} removed, "
                        f"{len(ch['retired'])} retired, {len(ch['split_changed'])} moved between splits"))  # fmt: skip


@release_app.command("build")
@with_cost_options("release build", outputs={"out_dir": "releases"})
def release_build(
    month: Annotated[str, typer.Option("--month", help="The month (YYYY-MM) whose papers make the release.")],
    config: Annotated[Path | None, typer.Option("--config", help="Release settings (see `theorembench release config`).")] = None,
    generator: Annotated[str | None, typer.Option("--generator", help="Writes every method's items (overrides the settings).")] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge model(s) of every method.")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Stored papers instead of fetching the month's.")] = None,
    local: Annotated[list[Path] | None, typer.Option("--local", help="Local e-prints or source folders to add and use.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="An arXiv mirror for the month's papers.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder of the releases.")] = Path("releases"),
    concurrency: Annotated[int, typer.Option("--concurrency", help="Items built at once.")] = 4,
    accept_weak_isolation: Annotated[bool, typer.Option("--accept-weak-isolation", help="Run EternalMath's generated code below full sandbox isolation (recorded).")] = False,
    db: DbOption = None,
) -> None:  # fmt: skip
    """Papers -> main theorems -> LMB, EternalMath and Proof2Hybrid items -> one versioned release (resumable)."""
    from theorembench.suite.release import build_release, release_settings

    overrides = {"models.generator": generator, "models.judges": judge or None}
    with user_errors():
        settings = release_settings(config, **overrides)
    bar = progress("release build", "{task.fields[note]}")
    task = bar.add_task("release build", total=None, note="")

    def on_step(key: str, stage: str, status: str) -> None:
        bar.update(task, note=f"{key} {stage} {status}")

    with user_errors(), opened_store(db) as st, bar:
        result = build_release(st, month=month, settings=settings, paper_ids=paper or (), local=local or (),
                               out=out_dir, base_url=base_url, concurrency=concurrency,
                               accept_weak_isolation=accept_weak_isolation or None, on_step=on_step,
                               progress=bar)  # fmt: skip
    print_release(result.manifest, result.folder, new=result.new)


@release_app.command("retire")
def release_retire(
    folder: Annotated[Path, typer.Argument(help="The release folder.")],
    item: Annotated[str, typer.Argument(help="The item's id in the manifest, e.g. lmb/2511.04651v1::orig.")],
    on: Annotated[str, typer.Option("--date", help="The removal date (YYYY-MM-DD); default today.")] = "",
    reason: Annotated[str, typer.Option("--reason", help="Why it is retired (kept in the manifest).")] = "",
) -> None:  # fmt: skip
    """Retire an item: from that date it no longer counts in scores on the release, nor in later releases."""
    from theorembench.suite.release import retire

    with user_errors():
        try:
            when = date.fromisoformat(on) if on else date.today()
        except ValueError:
            raise typer.BadParameter(f"--date must be YYYY-MM-DD, got {on!r}") from None
        manifest = retire(folder, item, on=when, reason=reason)
    out.print(plain(f"{item} retired from {when.isoformat()} in {manifest['release']}"))


@release_app.command("show")
def release_show(folder: Annotated[Path, typer.Argument(help="The release folder.")]) -> None:
    """A release's id, counts per method and changes against the previous release."""
    from theorembench.suite.release import read_manifest

    with user_errors():
        manifest = read_manifest(folder)
    print_release(manifest, folder)


@release_app.command("export")
def release_export(
    folder: Annotated[Path, typer.Argument(help="The release folder.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder of the export.")],
    formats: Annotated[list[str] | None, typer.Option("--format", help="hf (Parquet + dataset card), json (LMB's released JSON), jsonl; repeat for several.")] = None,
) -> None:  # fmt: skip
    """Export a release: private items without their answers, papers' text only where their licence allows."""
    from theorembench.suite.release_export import export_release

    with user_errors():
        done = export_release(folder, out_dir, formats=tuple(formats or ["hf"]))
    s = done.summary
    out.print(plain(f"{s['release']}: {s['items']} item(s) ({s['public']} public, {s['private']} private) "
                    f"as {', '.join(s['formats'])} to {out_dir}"))  # fmt: skip
    if s["text_withheld"]:
        out.print(plain(f"{len(s['text_withheld'])} item(s) ship without their paper's text (licence): "
                        f"{', '.join(s['text_withheld'][:5])}{' …' if len(s['text_withheld']) > 5 else ''}"))  # fmt: skip
    out.print(plain(f"what was written: {out_dir / 'export.json'}"))


@release_app.command("config")
def release_config() -> None:
    """Print the documented release settings file with its defaults."""
    from theorembench.suite.release import ReleaseSettings

    typer.echo(ReleaseSettings.default_toml(), nl=False)


__all__ = ["release_app"]
