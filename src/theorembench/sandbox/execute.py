"""Run one prepared command: capped output, a wall-clock limit, the whole process group killed."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Outcome:
    returncode: int  # as from wait4: negative for a signal
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool
    output_limit: bool
    wall_s: float
    rusage: object


def _kill_group(pid: int, term_first: bool = False) -> None:
    """SIGKILL the group; with ``term_first``, SIGTERM the leader first and give it 5 s to end the run itself."""
    if term_first:
        try:
            os.kill(pid, signal.SIGTERM)
            fd = os.pidfd_open(pid)
        except OSError:
            fd = None
        if fd is not None:
            with selectors.DefaultSelector() as sel:
                sel.register(fd, selectors.EVENT_READ)
                sel.select(timeout=5.0)
            os.close(fd)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def execute(argv: list[str], *, env: dict[str, str], cwd: Path | str, timeout_s: float,
            max_output_bytes: int, stdin: bytes | None = None, pass_fds: tuple[int, ...] = (),
            term_first: bool = False) -> Outcome:  # fmt: skip
    """Start ``argv`` in a new session, read at most ``max_output_bytes`` of each stream, then reap it.

    Past the wall limit, or when a stream overflows, the process group is killed (SIGKILL; with
    ``term_first`` the leader gets SIGTERM first, so that the sandbox's first stage kills the sandbox
    and reaps its pid namespace). Returns the status and rusage of ``wait4``.
    """
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            close_fds=True, pass_fds=pass_fds)  # fmt: skip
    if stdin and proc.stdin:
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    bufs = {"stdout": bytearray(), "stderr": bytearray()}
    trunc = {"stdout": False, "stderr": False}
    timed_out = output_limit = False
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
    deadline = start + timeout_s
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(timeout=min(left, 1.0)):
                name = key.data
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                room = max_output_bytes - len(bufs[name])
                bufs[name] += chunk[:room]
                if len(chunk) > room:
                    trunc[name] = output_limit = True
            if output_limit:
                break
    finally:
        if timed_out or output_limit:
            _kill_group(proc.pid, term_first)
        sel.close()
    # the streams are closed by every process of the run: only the reaping is left (bounded)
    status, rusage, killed = _wait4(proc.pid, deadline, term_first)
    timed_out = timed_out or killed
    proc.returncode = os.waitstatus_to_exitcode(status)
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    return Outcome(proc.returncode, bytes(bufs["stdout"]), bytes(bufs["stderr"]), trunc["stdout"], trunc["stderr"],
                   timed_out, output_limit, time.monotonic() - start, rusage)  # fmt: skip


def _wait4(pid: int, deadline: float, term_first: bool) -> tuple[int, object, bool]:
    """Reap the leader; kill its group at the deadline (the streams may close before it ends)."""
    _, status, rusage = os.wait4(pid, os.WNOHANG)
    if _ == pid:
        return status, rusage, False
    fd = os.pidfd_open(pid)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            ready = sel.select(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        os.close(fd)
    if not ready:
        _kill_group(pid, term_first)
    _, status, rusage = os.wait4(pid, 0)
    return status, rusage, not ready
