"""The one rule: code written by a model runs only under full isolation, unless the user accepted less.

Below full isolation (no bubblewrap, no user namespaces, a layer the probe did not find in force)
every sandboxed run is refused, and so is every command that would run such code, before any
work or model call. The user accepts weaker isolation explicitly, in one of these ways, the
first that is set winning:

1. the argument ``accept_weak_isolation=True`` (the ``--accept-weak-isolation`` option of
   ``improof eval``, ``eternal build``, ``eternal instantiate``, ``demo`` and ``sandbox run``,
   where ``--no-strict`` says the same); ``False`` refuses even where a setting accepts
   (``sandbox run --strict``);
2. :func:`accepting_weak_isolation`, the scope a command's option opens around its work;
3. the environment variable ``THEOREMBENCH_ACCEPT_WEAK_ISOLATION`` (1/0, true/false);
4. ``accept_weak_isolation = true`` under ``[sandbox]`` in the settings file (:mod:`settings`).

The isolation actually used is recorded by :func:`isolation_record` (layers, full or not, the
missing ones, whether weak isolation was accepted) in every results file and report header.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from theorembench.common.errors import UserError
from theorembench.sandbox.probe import CONTAINER, CONTAINER_FULL, FULL, Probe, probe
from theorembench.sandbox.settings import ACCEPT_ENV, accept_from_settings, settings_path

ACCEPT_OPTION = "--accept-weak-isolation"
_scope: list[bool] = []  # acceptance opened by accepting_weak_isolation, innermost last (process-wide)
_lock = threading.Lock()
_warned = False


class SandboxError(UserError):
    """The sandbox refused to run: below full isolation without acceptance, or a bad request."""


@contextlib.contextmanager
def accepting_weak_isolation(accept: bool | None) -> Iterator[None]:
    """Within this block (all threads), sandboxed runs follow ``accept`` when it is not None."""
    if accept is None:
        yield
        return
    with _lock:
        _scope.append(accept)
    try:
        yield
    finally:
        with _lock:
            _scope.pop()


def weak_isolation_accepted(accept: bool | None = None) -> bool:
    """Whether weaker isolation is accepted: the argument, the open scope, the variable, then the settings file."""
    if accept is not None:
        return accept
    with _lock:
        if _scope:
            return _scope[-1]
    return accept_from_settings()


def full_layers(layers: Iterable[str]) -> tuple[str, ...]:
    """What full isolation means for a run with these layers: a container's (``docker``, ``k8s``: see
    :mod:`containers`) when they come from a container, else the theorembench sandbox's."""
    return CONTAINER_FULL if CONTAINER in layers else FULL


def describe(layers: Iterable[str], accepted: bool = False) -> dict[str, Any]:
    """The isolation record of a run with these layers."""
    layers = list(layers)
    missing = [x for x in full_layers(layers) if x not in layers]
    return {"layers": layers, "full": not missing, "missing": missing,
            "weak_isolation_accepted": bool(missing) and accepted}  # fmt: skip


def isolation_record(accept: bool | None = None, pr: Probe | None = None) -> dict[str, Any]:
    """What this machine gives now, and whether weaker isolation is accepted (for results files)."""
    pr = pr or probe()
    return describe(pr.layers, weak_isolation_accepted(accept))


def combine(records: Iterable[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """One record for several runs (a resumed evaluation, a file of instances): the layers all of them had,
    full only if every one was, accepted if any was run with weak isolation accepted; None for none."""
    given = [r for r in records if r]
    found = [r for r in given if r.get("layers") is not None]
    if not found:
        return dict(given[0]) if given else None
    layers = [x for x in found[0]["layers"] if all(x in r["layers"] for r in found)]
    out = describe(layers, any(r.get("weak_isolation_accepted") for r in found))
    providers = {r.get("provider") for r in found}
    if len(providers) == 1 and None not in providers:  # all in one container provider: say which
        out = {k: found[0][k] for k in ("provider", "level") if k in found[0]} | out
    return out


def summary_line(record: Mapping[str, Any] | None) -> str:
    """``full (12 layers)`` or ``WEAK: missing userns, netns, … (accepted with --accept-weak-isolation)``."""
    if not record:
        return "not recorded"
    if record.get("used") is False:
        return f"not used ({record.get('reason', 'no sandboxed code')})"
    where = f"{record['provider']} {record.get('level', 'container')}, " if record.get("provider") else ""
    if record["full"]:
        return f"full ({where}{len(record['layers'])} layers: {', '.join(record['layers'])})"
    how = f"accepted with {ACCEPT_OPTION}" if record.get("weak_isolation_accepted") else "NOT accepted"
    return f"WEAK: {where}missing {', '.join(record['missing'])}; layers {', '.join(record['layers'])} ({how})"


def check(accept: bool | None = None, *, purpose: str = "sandboxed code") -> Probe:
    """The probe, when isolation is full or weaker isolation is accepted; else a one-line SandboxError."""
    global _warned
    pr = probe()
    if pr.full:
        return pr
    missing = ", ".join(x for x in FULL if x not in pr.layers)
    why = "; ".join(pr.problems) or "see `theorembench sandbox check`"
    if not weak_isolation_accepted(accept):
        strict = " (strict: the option refuses even where a setting accepts)" if accept is False else ""
        raise SandboxError(f"refusing to run {purpose} below full isolation{strict}: missing {missing} ({why}). "
                           f"`theorembench sandbox check` says why; to accept weaker isolation pass {ACCEPT_OPTION}, "
                           f"set {ACCEPT_ENV}=1, or write accept_weak_isolation = true under [sandbox] in "
                           f"{settings_path()}")  # fmt: skip
    if not _warned:
        _warned = True
        print(f"WARNING: theorembench sandbox below full isolation (accepted): missing {missing}. {why}. Code runs "
              "with rlimits, a clean environment and a timeout only.", file=sys.stderr)  # fmt: skip
    return pr


def require_isolation(accept: bool | None = None, *, purpose: str) -> dict[str, Any]:
    """For a command that will run a model's or generated code: refuse now (before any work) below full isolation
    unless accepted; returns the isolation record to put in its results."""
    return isolation_record(accept, check(accept, purpose=purpose))
