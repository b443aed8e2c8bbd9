"""CI=true turns every skip into a failure, so missing data or engines cannot pass CI silently (issue 9, item 24)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.paths import TESTS


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_needs_data.py").write_text(
        "import pytest\n\ndef test_needs_data():\n    pytest.skip('data not found')\n\n"
        "def test_fine():\n    assert True\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(TESTS)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "helpers.ci_rules", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_needs_data.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_a_skip_fails_under_ci(tmp_path: Path) -> None:
    done = _run(tmp_path, "true")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert "allows no skips: Skipped: data not found" in done.stdout


def test_a_skip_stays_a_skip_outside_ci(tmp_path: Path) -> None:
    done = _run(tmp_path, None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
