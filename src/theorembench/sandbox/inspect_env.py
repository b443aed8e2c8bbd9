"""The ``theorembench`` sandbox environment for Inspect AI, on the project's own isolation.

``Task(..., sandbox="theorembench")`` (or ``("theorembench", InspectSandboxConfig(...))``) runs
every ``exec`` of Inspect's ``python()`` and ``bash()`` tools through ``run_sandboxed``: bubblewrap
namespaces, seccomp, rlimits, a clean environment. Each sample gets its own work folder
(``/sandbox`` inside), kept between the calls of that sample and removed when it ends, so files
persist within a sample and never across samples. An exec that runs past its timeout raises
``TimeoutError`` at once: it is never retried, whatever ``timeout_retry`` says, because code that
did not finish once would cost the same again. Every exec is recorded (status, isolation layers,
times) in the sample's transcript and on ``environment.executions``. Below full isolation the task
is refused at its start unless weaker isolation is accepted (``accept_weak_isolation``, see
:mod:`policy`).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any, Literal, Union, overload

from inspect_ai.util import ExecResult, SandboxEnvironment, sandboxenv
from inspect_ai.util._sandbox.environment import SandboxUserUnsupportedError
from inspect_ai.util._sandbox.events import SandboxTimeoutError
from pydantic import BaseModel, ConfigDict

from theorembench.sandbox import layout
from theorembench.sandbox.policy import check
from theorembench.sandbox.result import SandboxResult
from theorembench.sandbox.runner import run_sandboxed

NAME = "theorembench"


class InspectSandboxConfig(BaseModel):
    """Limits of each exec in the Inspect sandbox (``timeout_s`` applies when the tool gives none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    timeout_s: float = 180.0
    memory_mb: int = 4096
    processes: int = 64
    max_output_bytes: int = 1_000_000
    file_size_mb: int = 64
    env_allow: tuple[str, ...] = ()
    accept_weak_isolation: bool | None = None  # None: the policy (refuse below full isolation unless accepted)


def _config(config: Any) -> InspectSandboxConfig:
    if config is None:
        return InspectSandboxConfig()
    if isinstance(config, InspectSandboxConfig):
        return config
    if isinstance(config, dict):
        return InspectSandboxConfig(**config)
    raise ValueError(f"the {NAME} sandbox takes an InspectSandboxConfig, not {type(config).__name__}")


def _record(res: SandboxResult, cmd: list[str]) -> dict[str, Any]:
    return {"cmd": cmd[:3], "status": res.status, "reason": res.reason, "exit_code": res.exit_code,
            "wall_s": res.wall_s, "cpu_s": res.cpu_s, "peak_memory_mb": res.peak_memory_mb,
            "isolation": res.isolation, "stdout_truncated": res.stdout_truncated,
            "stderr_truncated": res.stderr_truncated}  # fmt: skip


@sandboxenv(name=NAME)
class TheorembenchSandbox(SandboxEnvironment):
    """One sample's sandbox: a private work folder on the host, every command run isolated inside it."""

    def __init__(self, config: InspectSandboxConfig) -> None:
        super().__init__()
        self.config = config
        self.work = Path(tempfile.mkdtemp(prefix="tb-inspect-"))
        self.executions: list[dict[str, Any]] = []

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return InspectSandboxConfig(**config)

    @classmethod
    async def task_init(cls, task_name: str, config: Any) -> None:
        """Refuse the task before its first sample (and model call) below full isolation, unless accepted."""
        check(_config(config).accept_weak_isolation, purpose=f"the tools of an Inspect task (the {NAME} sandbox)")

    @classmethod
    async def sample_init(cls, task_name: str, config: Any, metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        return {"default": cls(_config(config))}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: Any, environments: dict[str, SandboxEnvironment],
                             interrupted: bool) -> None:  # fmt: skip
        for env in environments.values():
            if isinstance(env, TheorembenchSandbox):
                shutil.rmtree(env.work, ignore_errors=True)

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:  # fmt: skip
        if user is not None:
            raise SandboxUserUnsupportedError(f"the {NAME} sandbox runs every command as its one unprivileged user")
        cfg = self.config
        timeout_s = float(timeout) if timeout is not None else cfg.timeout_s
        stdin = input.encode() if isinstance(input, str) else input
        res = await asyncio.to_thread(
            run_sandboxed, list(cmd), timeout_s=timeout_s, memory_mb=cfg.memory_mb, processes=cfg.processes,
            max_output_bytes=cfg.max_output_bytes, file_size_mb=cfg.file_size_mb, work_dir=self.work,
            env_allow=cfg.env_allow, env=env or None, cwd=cwd, stdin=stdin,
            accept_weak_isolation=cfg.accept_weak_isolation)  # fmt: skip
        record = _record(res, list(cmd))
        self.executions.append(record)
        _transcript_info(record)
        if res.status == "timeout":
            raise SandboxTimeoutError(f"command stopped at its {res.reason} (not retried)",
                                      truncated_output=(res.stdout + res.stderr) or None)
        stderr = res.stderr
        if res.status != "ok" and res.reason:
            stderr += f"\n[sandbox: {res.status}: {res.reason}]"
        if res.stdout_truncated or res.stderr_truncated:
            stderr += f"\n[sandbox: output truncated at {cfg.max_output_bytes} bytes per stream]"
        code = res.exit_code if res.exit_code is not None else 128 + (res.signal or 9)
        return ExecResult(success=res.status == "ok", returncode=code, stdout=res.stdout, stderr=stderr)

    def _host_path(self, file: str) -> Path:
        """A path of the work folder on the host; refuses paths (or symlinks) that lead out of it."""
        try:
            target = self.work / layout.work_relative(file)
        except ValueError as exc:
            raise PermissionError(f"{exc}: only the work folder persists in this sandbox") from None
        if not layout.inside(self.work, target.parent):
            raise PermissionError(f"{file}: outside the sandbox's work folder")
        return target

    async def write_file(self, file: str, contents: str | bytes) -> None:
        target = self._host_path(file)
        target.parent.mkdir(parents=True, exist_ok=True)
        self._host_path(file)  # the folders just made may not be links out either
        if target.is_symlink():
            target.unlink()
        if target.is_dir():
            raise IsADirectoryError(file)
        target.write_bytes(contents.encode("utf-8") if isinstance(contents, str) else contents)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> Union[str, bytes]:
        target = self._host_path(file)
        if target.is_symlink():
            raise PermissionError(f"{file}: a symbolic link; the sandbox reads only plain files")
        if not target.exists():
            raise FileNotFoundError(file)
        data = target.read_bytes()
        return data.decode("utf-8") if text else data


def _transcript_info(record: dict[str, Any]) -> None:
    """Put the execution record (isolation included) in the sample's transcript, when there is one."""
    try:
        from inspect_ai.log import transcript

        transcript().info({"theorembench_sandbox": record}, source=NAME)
    except Exception:  # outside an Inspect sample: the record stays on ``executions``
        pass
