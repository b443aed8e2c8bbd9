"""Killing a command mid-run, at a chosen point: the shared first half of every kill-and-resume test."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from helpers.cli import cli_env
from theorembench.testing.fakellm import FakeLLMServer


def kill_when_held(cmd: list[str], fake: FakeLLMServer, *, answered: int, stored: Callable[[], int], cwd: Path,
                   env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.Popen:  # fmt: skip
    """Start ``cmd``; once the fake server has answered ``answered`` requests and holds the next one, and
    ``stored()`` shows those answers in the store (a bounded wait on that condition), SIGKILL it.

    The script must hold requests past ``answered`` (``max_responses``). Returns the killed process.
    """
    proc = subprocess.Popen(cmd, env=env or cli_env(), cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        fake.wait_for(lambda st: st["completed"] == answered and st["held"] >= 1, timeout=timeout)
        deadline = time.monotonic() + 60
        while stored() < answered:
            assert time.monotonic() < deadline, "the answers never reached the store"
            assert proc.poll() is None, "the command ended before it was killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return proc
