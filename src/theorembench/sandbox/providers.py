"""Which sandbox runs the code: ``theorembench`` (the default), ``docker`` or ``k8s``, behind one interface.

The commands that run a model's or generated code (``improof eval``, ``eternal build``,
``eternal instantiate``) take ``--sandbox theorembench|docker|k8s`` and pass the kind here:

- :func:`require_sandbox` is the command's check before any work or model call: it refuses below
  full isolation unless weaker isolation is accepted (:mod:`policy`), and returns the isolation
  record for the command's results. For ``docker`` and ``k8s`` it first says, in one line, what is
  missing (the daemon, the compose plugin, the ``inspect-k8s-sandbox`` package), then reads the
  layers from inside a probe container (:mod:`containers`);
- :func:`open_sandbox` gives, for the length of a ``with`` block, an object whose ``run`` takes
  what :func:`~theorembench.sandbox.runner.run_sandboxed` takes (a command or a script, files,
  standard input, limits, variables) and returns the same :class:`SandboxResult`;
- :func:`inspect_sandbox` is what an Inspect ``Task(sandbox=...)`` takes for the kind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from theorembench.common.errors import InvalidSetting
from theorembench.sandbox.policy import require_isolation
from theorembench.sandbox.probe import probe
from theorembench.sandbox.result import SandboxResult
from theorembench.sandbox.runner import run_sandboxed

KINDS = ("theorembench", "docker", "k8s")
DEFAULT = "theorembench"


class Sandbox(Protocol):
    """What a caller runs code through: one ``run`` per program, each in a fresh work folder (or container)."""

    kind: str
    layers: list[str]  # the isolation layers each run has (as the runs' ``isolation`` says)

    def run(self, argv: Sequence[str] | None = None, *, script: str | None = None,
            files: Mapping[str, str | bytes] | None = None, stdin: bytes | None = None, timeout_s: float = 30.0,
            memory_mb: int = 2048, max_output_bytes: int = 1_000_000,
            env: Mapping[str, str] | None = None) -> SandboxResult: ...  # fmt: skip


class LocalSandbox:
    """The theorembench sandbox (bubblewrap, seccomp, rlimits): each run is one :func:`run_sandboxed`."""

    kind = DEFAULT

    def __init__(self, accept_weak_isolation: bool | None = None) -> None:
        self.accept = accept_weak_isolation

    @property
    def layers(self) -> list[str]:
        return list(probe().layers)

    def run(self, argv: Sequence[str] | None = None, *, script: str | None = None,
            files: Mapping[str, str | bytes] | None = None, stdin: bytes | None = None, timeout_s: float = 30.0,
            memory_mb: int = 2048, max_output_bytes: int = 1_000_000,
            env: Mapping[str, str] | None = None) -> SandboxResult:  # fmt: skip
        return run_sandboxed(argv, script=script, files=files, stdin=stdin, timeout_s=timeout_s, memory_mb=memory_mb,
                             max_output_bytes=max_output_bytes, env=env, accept_weak_isolation=self.accept)  # fmt: skip


def check_kind(kind: str | None) -> str:
    """The sandbox kind, checked (None: the default); an InvalidSetting naming the choices otherwise."""
    name = (kind or DEFAULT).strip().lower()
    if name not in KINDS:
        raise InvalidSetting("sandbox", f"{kind!r} is not a sandbox; choose one of {', '.join(KINDS)}")
    return name


def require_sandbox(kind: str | None, accept_weak_isolation: bool | None = None, *, purpose: str) -> dict[str, Any]:
    """Before any work: the isolation record of ``kind``, or a one-line SandboxError (unavailable, or below full
    isolation without acceptance)."""
    name = check_kind(kind)
    if name == DEFAULT:
        return require_isolation(accept_weak_isolation, purpose=purpose)
    from theorembench.sandbox.containers import container_isolation

    return container_isolation(name, accept_weak_isolation, purpose=purpose)


@contextlib.contextmanager
def open_sandbox(kind: str | None = None, *, accept_weak_isolation: bool | None = None, memory_mb: int = 2048,
                 processes: int = 64, purpose: str = "sandboxed code") -> Iterator[Sandbox]:  # fmt: skip
    """The sandbox of ``kind`` for the block. ``memory_mb`` and ``processes`` bound each container of ``docker``
    (each run's own ``memory_mb`` applies inside it too); the theorembench sandbox takes its limits per run."""
    name = check_kind(kind)
    if name == DEFAULT:
        yield LocalSandbox(accept_weak_isolation)
        return
    from theorembench.sandbox.containers import ContainerSandbox

    box = ContainerSandbox.start(name, accept_weak_isolation, memory_mb=memory_mb, processes=processes,
                                 purpose=purpose)  # fmt: skip
    try:
        yield box
    finally:
        box.close()


def inspect_sandbox(kind: str | None, *, timeout_s: float, memory_mb: int,
                    accept_weak_isolation: bool | None = None, processes: int = 64) -> Any:  # fmt: skip
    """What ``inspect_ai.Task(sandbox=...)`` takes to run a task's tools in ``kind``."""
    name = check_kind(kind)
    if name == DEFAULT:
        from theorembench.sandbox.inspect_env import NAME, InspectSandboxConfig

        return (NAME, InspectSandboxConfig(timeout_s=timeout_s, memory_mb=memory_mb, processes=processes,
                                           accept_weak_isolation=accept_weak_isolation))  # fmt: skip
    from theorembench.sandbox.containers import provider_config

    config = provider_config(name, memory_mb=memory_mb, processes=processes)
    return (name, config) if config is not None else name


__all__ = ["DEFAULT", "KINDS", "LocalSandbox", "Sandbox", "check_kind", "inspect_sandbox", "open_sandbox",
           "require_sandbox"]  # fmt: skip
