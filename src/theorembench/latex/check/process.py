"""Running an engine (pdflatex, node) as a child process with bounded time, output and resources.

:func:`run_process` starts the command in its own process group, feeds it its input,
and keeps at most ``max_output`` bytes of each of stdout and stderr: a child that
writes more is killed with its whole group at once and the rest is never read, so a
runaway engine costs bounded memory whatever it prints. A child that does not finish
within ``timeout_s`` is killed the same way. :class:`Limits` adds kernel resource
limits (CPU seconds, the size of any file it writes, address space; core dumps off),
set in the child by a tiny Python launcher before it becomes the engine, so nothing
runs in the forked parent (no ``preexec_fn``, which is unsafe with threads).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import IO

__all__ = ["Limits", "Ran", "run_process"]

_READ_CHUNK = 1 << 16

# argv: CPU seconds, file bytes, address-space bytes (-1: leave as is), then the command
_LAUNCHER = """\
import os, resource, sys
for name, value in (("RLIMIT_CORE", 0), ("RLIMIT_CPU", int(sys.argv[1])), ("RLIMIT_FSIZE", int(sys.argv[2])),
                    ("RLIMIT_AS", int(sys.argv[3]))):
    if value < 0 or not hasattr(resource, name):
        continue
    which = getattr(resource, name)
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass
import signal  # Python ignores SIGPIPE and SIGXFSZ and an exec keeps that: give the engine the defaults back
for name in ("SIGPIPE", "SIGXFSZ"):
    if hasattr(signal, name):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
os.execv(sys.argv[4], sys.argv[4:])
"""


@dataclass(frozen=True)
class Limits:
    """Kernel limits for the child: None leaves one as it is."""

    cpu_s: int | None = None  # CPU seconds (SIGXCPU past it)
    file_bytes: int | None = None  # largest file it may write (SIGXFSZ past it): bounds a TeX log
    memory_bytes: int | None = None  # address space; not for node (V8 reserves far more than it uses)


@dataclass
class Ran:
    """What a child did: its exit status, the head of its output, and why it was stopped, if it was."""

    returncode: int | None  # None when it was killed for its time or its output
    out: str  # the first max_output bytes of stdout, decoded
    err: str  # the first max_output bytes of stderr, decoded
    stopped: str | None = None  # "timeout", "output" (over max_output), "file size" or "cpu time" (its limits)
    bytes_read: int = 0  # bytes kept from stdout and stderr together (at most 2 * max_output)


def _launch(cmd: list[str], limits: Limits | None) -> list[str]:
    if limits is None or os.name != "posix":
        return cmd

    def arg(v: int | None) -> str:
        return str(-1 if v is None else max(0, int(v)))

    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, arg(limits.cpu_s), arg(limits.file_bytes),
            arg(limits.memory_bytes), *cmd]  # fmt: skip


def run_process(cmd: list[str], *, input_text: str | None, timeout_s: float, cwd: str | None,
                env: dict[str, str] | None, max_output: int = 1 << 20, limits: Limits | None = None) -> Ran:  # fmt: skip
    """Run cmd in its own process group under a timeout, an output cap and ``limits``.

    ``cmd[0]`` must be an absolute path when ``limits`` are given (the launcher execs it).
    Raises OSError when the command cannot be started.
    """
    proc = subprocess.Popen(
        _launch(cmd, limits), stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
    )  # fmt: skip
    over = threading.Event()

    def kill() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:
                proc.kill()
            except ProcessLookupError:
                pass

    def drain(stream: IO[bytes], buf: bytearray) -> None:
        with stream:
            fd = stream.fileno()
            while True:
                chunk = os.read(fd, _READ_CHUNK)
                if not chunk:
                    return
                room = max_output - len(buf)
                if room > 0:
                    buf += chunk[:room]
                if len(chunk) > room and not over.is_set():  # past the cap: stop the child, discard the rest
                    over.set()
                    kill()

    def feed(stream: IO[bytes], data: bytes) -> None:
        try:
            with stream:
                stream.write(data)
        except OSError:  # the child exited (or was killed) before reading all of it
            pass

    out, err = bytearray(), bytearray()
    assert proc.stdout is not None and proc.stderr is not None
    threads = [threading.Thread(target=drain, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=drain, args=(proc.stderr, err), daemon=True)]  # fmt: skip
    if input_text is not None:
        assert proc.stdin is not None
        threads.append(threading.Thread(target=feed, args=(proc.stdin, input_text.encode("utf-8")), daemon=True))
    for t in threads:
        t.start()
    timed_out = False
    try:
        proc.wait(timeout=max(0.1, timeout_s))
    except subprocess.TimeoutExpired:
        timed_out = True
        kill()
        proc.wait()
    for t in threads:
        t.join(10)  # the pipes close when the group is gone
    rc = proc.returncode
    stopped = None
    if over.is_set():
        stopped = "output"
    elif timed_out:
        stopped = "timeout"
    elif rc == -getattr(signal, "SIGXFSZ", -1000):
        stopped = "file size"
    elif rc == -getattr(signal, "SIGXCPU", -1000):
        stopped = "cpu time"
    return Ran(None if stopped in ("output", "timeout") else rc, out.decode("utf-8", "replace"),
               err.decode("utf-8", "replace"), stopped, len(out) + len(err))  # fmt: skip
