"""Under ``CI=true`` nothing the tests need may go missing silently: no skips, and data and engines checked first.

Loaded by conftest.py; a test runs it on a throwaway test file to prove a skip fails there.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"  # beside the checkout (helpers.paths.SHARED)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under CI=true, what the tests need must be there: missing data or engines stop the run at once."""
    if not _in_ci():
        return
    missing = [] if (SHARED / "data").is_dir() else [f"{SHARED / 'data'} (the shared real data)"]
    missing += [f"{tool} (run scripts/setup.sh)" for tool in ("pdflatex", "node") if shutil.which(tool) is None]
    if missing:
        pytest.exit("CI=true and the test run lacks: " + "; ".join(missing), returncode=3)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Under CI=true a skipped test fails: nothing the tests need may silently go missing."""
    outcome = yield
    report = outcome.get_result()
    if _in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, which allows no skips: {reason}"


