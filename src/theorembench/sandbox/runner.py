"""``run_sandboxed``: one command or Python script, isolated, limited, judged and recorded."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from theorembench.sandbox import layout, policy, seccomp
from theorembench.sandbox.execute import Outcome, execute
from theorembench.sandbox.policy import SandboxError
from theorembench.sandbox.probe import Probe, full_argv, prepare_workdir
from theorembench.sandbox.result import Limits, SandboxResult, usage_of

_MEMORY_MARKERS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory", "Unable to allocate")


def _write_files(work: Path, files: Mapping[str, str | bytes]) -> None:
    for name, data in files.items():
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts:
            raise SandboxError(f"sandbox file name must be relative, without '..': {name}")
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()
        path.write_bytes(data.encode() if isinstance(data, str) else data)


def run_sandboxed(argv: Sequence[str] | None = None, *, script: str | None = None, timeout_s: float = 30.0,
                  memory_mb: int = 2048, cpu_s: int | None = None, max_output_bytes: int = 1_000_000,
                  processes: int = 64, file_size_mb: int = 64, files: Mapping[str, str | bytes] | None = None,
                  work_dir: str | Path | None = None, env_allow: Sequence[str] = (), stdin: bytes | None = None,
                  accept_weak_isolation: bool | None = None, env: Mapping[str, str] | None = None,
                  cwd: str | None = None) -> SandboxResult:  # fmt: skip
    """Run ``argv`` (``python`` as its first word means the sandbox's Python) or the Python ``script``.

    ``files`` are written into the work folder first (a fresh one, removed after the run, unless
    ``work_dir`` names one to keep). The program starts in the work folder (``/sandbox`` inside),
    or in ``cwd``, a folder under it. ``env_allow`` names variables of the caller to pass through;
    ``env`` sets variables explicitly. Nothing else of the caller's environment goes in.

    Below full isolation the run is refused (``SandboxError``) unless weaker isolation is accepted:
    ``accept_weak_isolation`` True or False decides for this run, None follows :mod:`policy`.
    """
    if (argv is None) == (script is None):
        raise SandboxError("give either a command (argv) or a Python script, not both")
    limits = Limits(timeout_s=timeout_s, cpu_s=cpu_s, memory_mb=memory_mb, max_output_bytes=max_output_bytes,
                    file_size_mb=file_size_mb, processes=processes)  # fmt: skip
    pr = policy.check(accept_weak_isolation)
    tmp = tempfile.mkdtemp(prefix="tb-sandbox-") if work_dir is None else None
    work = Path(tmp) if tmp else Path(work_dir).absolute()  # type: ignore[arg-type]
    try:
        work.mkdir(parents=True, exist_ok=True)
        _write_files(work, dict(files or {}, **({"main.py": script} if script is not None else {})))
        cmd = list(argv) if argv is not None else ["python", "main.py"]
        if not cmd:
            raise SandboxError("empty command")
        if cmd[0] in ("python", "python3"):
            cmd[0] = layout.python()
        rlimits = limits.rlimits()
        sub = _subfolder(work, cwd)
        report_r, report_w = os.pipe()
        if pr.mode == "bwrap":
            assert pr.bwrap is not None
            prepare_workdir(work)
            inner_env = layout.clean_env(env_allow) | dict(env or {})
            chdir = str(Path(layout.WORK, sub)) if sub != Path(".") else layout.WORK
            full = full_argv(pr.bwrap, work, inner_env, rlimits, cmd, report_w, chdir=chdir)
            outer_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        else:
            outer_env = layout.clean_env(env_allow, for_bwrap=False) | dict(env or {})
            outer_env["HOME"] = outer_env["TMPDIR"] = str(work)
            full = layout.launcher_argv(rlimits, seccomp.filter_program().hex(), cmd, report_w)
        try:
            out = execute(full, env=outer_env, cwd=work / sub, timeout_s=timeout_s, max_output_bytes=max_output_bytes,
                          stdin=stdin, pass_fds=(report_w,), term_first=pr.mode == "bwrap")  # fmt: skip
        finally:
            os.close(report_w)
            report = _read_report(report_r)
        return _judge(out, pr, limits, rlimits["RLIMIT_CPU"][0], report)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _subfolder(work: Path, cwd: str | None) -> Path:
    """``cwd`` as a folder under the work folder (relative, or absolute under /sandbox); created if missing."""
    if not cwd:
        return Path(".")
    try:
        path = layout.work_relative(cwd)
    except ValueError as exc:
        raise SandboxError(f"working folder {exc}") from None
    target = work / path
    if not layout.inside(work, target):
        raise SandboxError(f"working folder {cwd} leaves the work folder")
    target.mkdir(parents=True, exist_ok=True)
    return path


def _read_report(fd: int) -> dict:
    """The launcher's report of the program's CPU time and peak memory ({} when it was killed first)."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while chunk := os.read(fd, 4096):
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
    try:
        report = json.loads(data)
        return {"cpu_s": float(report["cpu_s"]), "peak_mb": float(report["maxrss_kb"]) / 1024}
    except (ValueError, KeyError, TypeError):
        return {}


def _judge(out: Outcome, pr: Probe, limits: Limits, cpu_limit: int, report: dict) -> SandboxResult:
    code, sig = out.returncode, None
    if code < 0:
        sig = -code
    elif 128 < code < 128 + 65:  # the launcher (and bubblewrap) report a signal as 128 + its number
        sig = code - 128
    cpu, peak = usage_of(out.rusage)  # type: ignore[arg-type]
    if report:  # the launcher's figures: the caller's wait4 also counts the stages and the fork of a big caller
        cpu, peak = report["cpu_s"], report["peak_mb"]
    stderr = out.stderr.decode("utf-8", errors="replace")
    tail = stderr[-4000:]
    if out.timed_out:
        status, reason = "timeout", f"wall time limit ({limits.timeout_s:g} s)"
    elif out.output_limit:
        status, reason = "killed", f"output limit ({limits.max_output_bytes} bytes)"
    elif sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= cpu_limit - 0.05):
        status, reason = "timeout", f"CPU time limit ({cpu_limit} s)"
    elif code in (125, 126) and ("sandbox launcher:" in tail or "sandbox stage0:" in tail):
        status, reason = "error", "the sandbox could not start the program"
    elif code == 0:
        status, reason = "ok", ""
    elif any(marker in tail for marker in _MEMORY_MARKERS):
        status, reason = "memory", f"memory limit ({limits.memory_mb} MB)"
    elif sig is not None:
        status, reason = "killed", f"signal {signal.Signals(sig).name if sig in signal.valid_signals() else sig}"
    else:
        status, reason = "error", f"exit code {code}"
    return SandboxResult(status=status, exit_code=None if sig else code, signal=sig,
                         stdout=out.stdout.decode("utf-8", errors="replace"), stderr=stderr,
                         stdout_truncated=out.stdout_truncated, stderr_truncated=out.stderr_truncated,
                         wall_s=round(out.wall_s, 4), cpu_s=round(cpu, 4), peak_memory_mb=round(peak, 1),
                         isolation=list(pr.layers), reason=reason, limits=limits.__dict__.copy())  # fmt: skip
