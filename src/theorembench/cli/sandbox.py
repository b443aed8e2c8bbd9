"""``theorembench sandbox``: run a script or a command isolated, and say which isolation this machine gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import fail, out, plain, user_errors

sandbox_app = typer.Typer(help="Run untrusted code isolated (namespaces, seccomp, limits).", no_args_is_help=True)


@sandbox_app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def sandbox_run(
    args: Annotated[list[str], typer.Argument(help="SCRIPT.py [ARGS...] (copied into a fresh work folder and run "
                                                   "with the sandbox's Python), or -- CMD [ARGS...].")],
    timeout: Annotated[float, typer.Option("--timeout", help="Wall-clock limit in seconds.")] = 30.0,
    memory: Annotated[int, typer.Option("--memory", help="Address-space limit per process, MB.")] = 2048,
    cpu: Annotated[int | None, typer.Option("--cpu", help="CPU-time limit in seconds (default: the timeout).")] = None,
    max_output: Annotated[int, typer.Option("--max-output", help="Bytes kept of stdout and of stderr each.")] = 1_000_000,
    allow_env: Annotated[list[str] | None, typer.Option("--allow-env", help="Pass this variable through (repeat).")] = None,
    strict: Annotated[bool | None, typer.Option("--strict/--no-strict",
                      help="--strict refuses to run below full isolation even where a setting accepts it; "
                           "--no-strict accepts weaker isolation for this run (what --accept-weak-isolation does "
                           "elsewhere). Default: refuse, unless $THEOREMBENCH_ACCEPT_WEAK_ISOLATION or the settings "
                           "file accept.")] = None,
    accept_weak_isolation: Annotated[bool, typer.Option("--accept-weak-isolation", help="The same as --no-strict: run even below full isolation (rlimits only).")] = False,
) -> None:  # fmt: skip
    """Run a Python script or a command in the sandbox and print one JSON object (exit 1 unless status is ok)."""
    from theorembench.sandbox import run_sandboxed

    if accept_weak_isolation and strict:
        raise fail("--strict and --accept-weak-isolation contradict each other: give one")
    accept = True if accept_weak_isolation else None if strict is None else not strict
    first = Path(args[0])
    common = dict(timeout_s=timeout, memory_mb=memory, cpu_s=cpu, max_output_bytes=max_output,
                  env_allow=allow_env or [], accept_weak_isolation=accept)  # fmt: skip
    with user_errors():
        if first.suffix == ".py" and first.is_file():
            files = {first.name: first.read_bytes()}
            result = run_sandboxed(["python", first.name, *args[1:]], files=files, **common)  # type: ignore[arg-type]
        else:
            result = run_sandboxed(args, **common)  # type: ignore[arg-type]
    print(json.dumps(result.to_dict()))
    if not result.ok:
        raise typer.Exit(1)


@sandbox_app.command("check")
def sandbox_check(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    tools: Annotated[bool, typer.Option("--tools/--no-tools", help="Also list the tools usable inside.")] = True,
) -> None:
    """Which isolation layers this machine gives, and the tool manifest (sympy, numpy, ...; sage, gap, gp)."""
    from theorembench.sandbox import FULL, probe, tool_manifest, weak_isolation_accepted
    from theorembench.sandbox.settings import settings_path

    pr = probe()
    with user_errors():
        accepted = weak_isolation_accepted()
    report = pr.to_dict() | {"accept_weak_isolation": accepted, "settings": str(settings_path())}
    report |= {"tools": tool_manifest()} if tools else {}
    if as_json:
        print(json.dumps(report, indent=2))
        return
    table = Table("layer", "in force")
    for layer in FULL:
        table.add_row(layer, "yes" if layer in pr.layers else "NO")
    out.print(table)
    out.print(plain(f"mode: {pr.mode}   full isolation: {'yes' if pr.full else 'NO'}   weaker isolation accepted: "
                    f"{'yes' if accepted else 'no'} (settings: {report['settings']})"))
    for problem in pr.problems:
        out.print(plain(f"problem: {problem}"))
    if tools:
        manifest = report["tools"]
        for name, version in manifest["python"].items():
            out.print(plain(f"python package {name}: {version or 'not importable inside'}"))
        for exe, info in manifest["host"].items():
            where = "runs inside, offered" if info["inside"] else f"not offered: {info['check']}"
            out.print(plain(f"host tool {info['name']} ({exe}): {info['path'] or 'absent (optional)'}; {where}"))
    if not pr.full:
        how = "refused" if not accepted else "run only because weaker isolation is accepted"
        raise fail(f"below full isolation on this machine: model-written code is {how} (accept with "
                   "--accept-weak-isolation, THEOREMBENCH_ACCEPT_WEAK_ISOLATION=1 or the settings file)", 1)
