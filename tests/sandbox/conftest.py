"""The ``docker`` marker: tests that run Inspect's docker provider for real need a working Docker.

Where none answers (no client, no daemon, no compose plugin, or the sandbox image not pulled), they are
deselected, not skipped, and the run's summary says so in one line with the reason: a run without
Docker passes, and it shows that these tests did not run. ``THEOREMBENCH_TEST_DOCKER=1`` keeps them
selected whatever the machine has, so that a run meant to cover Docker fails where it is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from theorembench.sandbox.containers import unavailable

REQUIRE_ENV = "THEOREMBENCH_TEST_DOCKER"
IMAGE = "python:3.11-slim"  # the default image of --sandbox docker (sandbox/settings.py)
_deselected: list[str] = []


def docker_missing() -> str:
    """Why the docker tests cannot run here ("" when they can)."""
    why = unavailable("docker")
    if why:
        return why
    done = subprocess.run([shutil.which("docker") or "docker", "image", "inspect", IMAGE], capture_output=True,
                          check=False, timeout=60)  # fmt: skip
    return "" if done.returncode == 0 else f"the image {IMAGE} is not pulled (docker pull {IMAGE})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    marked = [item for item in items if item.get_closest_marker("docker")]
    if not marked or os.environ.get(REQUIRE_ENV) == "1":
        return
    why = docker_missing()
    if not why:
        return
    items[:] = [item for item in items if not item.get_closest_marker("docker")]
    config.hook.pytest_deselected(items=marked)
    _deselected.append(f"{len(marked)} test(s) marked docker deselected ({why}); {REQUIRE_ENV}=1 runs them "
                       "anyway (and fails without Docker)")  # fmt: skip


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    for line in _deselected:
        terminalreporter.write_line(line, yellow=True)
