"""What a sandboxed run asks for (limits) and what it returns (the result)."""

from __future__ import annotations

import resource
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Limits of one run. Wall time is enforced from outside; the rest by rlimits inside."""

    timeout_s: float = 30.0
    cpu_s: int | None = None  # default: the wall timeout, rounded up
    memory_mb: int = 2048  # address space per process
    max_output_bytes: int = 1_000_000  # for stdout and for stderr, each
    file_size_mb: int = 64  # largest file a process may write
    open_files: int = 256
    processes: int = 64  # processes and threads of the run

    def rlimits(self) -> dict[str, list[int]]:
        cpu = int(self.cpu_s if self.cpu_s is not None else max(1, -(-self.timeout_s // 1)))
        mem = self.memory_mb * 1024 * 1024
        fsize = self.file_size_mb * 1024 * 1024
        return {"RLIMIT_CPU": [cpu, cpu + 1], "RLIMIT_AS": [mem, mem], "RLIMIT_DATA": [mem, mem],
                "RLIMIT_FSIZE": [fsize, fsize], "RLIMIT_NOFILE": [self.open_files, self.open_files],
                "RLIMIT_NPROC": [self.processes, self.processes], "RLIMIT_CORE": [0, 0]}  # fmt: skip


STATUSES = ("ok", "timeout", "memory", "killed", "error")


@dataclass
class SandboxResult:
    """One run: ``status`` is ok / timeout / memory / killed / error; ``reason`` says why when not ok."""

    status: str
    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    wall_s: float
    cpu_s: float
    peak_memory_mb: float
    isolation: list[str]
    reason: str = ""
    limits: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def usage_of(ru: resource.struct_rusage | None) -> tuple[float, float]:
    """CPU seconds and peak resident memory (MB) of a waited-for process tree."""
    if ru is None:
        return 0.0, 0.0
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024
