"""``--sandbox docker`` for real: Inspect's docker provider with our compose file (marked ``docker``).

Without a working Docker (client, daemon, compose plugin, the python:3.11-slim image) these tests are
deselected and the run's summary says why (tests/sandbox/conftest.py); ``THEOREMBENCH_TEST_DOCKER=1``
keeps them, so that a run meant to cover Docker fails where it is missing. What needs no Docker (the
choice, the one-line errors, the record read from a probe's output, the compose file) is tested in
test_sandbox_providers.py on every machine.
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env

from theorembench.sandbox import summary_line
from theorembench.sandbox.providers import open_sandbox, require_sandbox

pytestmark = pytest.mark.docker

# the full set for a container of our compose file, written out by hand
FULL = ["container", "no-network", "non-root", "no-capabilities", "no-new-privs", "seccomp", "pids-limit",
        "memory-limit"]  # fmt: skip


def test_a_docker_container_is_probed_full_and_recorded_with_its_provider() -> None:
    found = require_sandbox("docker", purpose="a test")
    assert found == {"provider": "docker", "level": "container", "layers": FULL, "full": True, "missing": [],
                     "weak_isolation_accepted": False}  # fmt: skip
    assert summary_line(found) == f"full (docker container, 8 layers: {', '.join(FULL)})"


def test_each_program_runs_in_a_fresh_container_with_the_limits() -> None:
    with open_sandbox("docker", memory_mb=1024, processes=32) as box:
        assert box.kind == "docker" and box.layers == FULL
        res = box.run(["python", "main.py", "arg"], files={"main.py": "import os, sys\nprint(sys.stdin.read(), "
                      "sys.argv[1], os.environ['K'], open('d/a.txt').read())\nopen('left.txt', 'w').write('x')",
                      "d/a.txt": "file"}, stdin=b"in", env={"K": "v"}, timeout_s=60)  # fmt: skip
        assert (res.status, res.stdout, res.isolation) == ("ok", "in arg v file\n", FULL)
        assert box.run(script="import os; print(os.path.exists('left.txt'))", timeout_s=60).stdout == "False\n"
        net = box.run(script="import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)", timeout_s=60)
        assert net.status == "error" and "OSError" in net.stderr  # no interface but loopback: unreachable
        assert box.run(script="import time; time.sleep(60)", timeout_s=2).status == "timeout"
        memory = box.run(script="x = bytearray(900 * 1024 * 1024)", timeout_s=60, memory_mb=256)
        assert (memory.status, memory.reason) == ("memory", "memory limit (256 MB)")


def test_eternal_instantiate_validates_in_docker_and_records_it(tmp_path: Path) -> None:
    shipped = resources.files("theorembench.data").joinpath("eternal", "derangements.json")
    out = tmp_path / "out"
    done = subprocess.run([PYTHON, "-m", "theorembench.cli", "eternal", "instantiate", str(shipped), "--n", "2",
                           "--sandbox", "docker", "--out", str(out)], env=cli_env(), cwd=tmp_path, check=False,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["instances"] == 2 and summary["isolation"]["provider"] == "docker"
    assert summary["isolation"]["layers"] == FULL and summary["isolation"]["full"] is True
    for line in (out / "instances.jsonl").read_text().splitlines():
        ex = json.loads(line)["execution"]
        assert (ex["isolation"], ex["full_isolation"], ex["weak_isolation_accepted"]) == (FULL, True, False)
