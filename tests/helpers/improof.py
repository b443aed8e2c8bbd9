"""IMProofBench: the default store (under the test's home) holding the one odd-sums problem, active."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.improof_samples import odd_sums_yaml
from theorembench.methods.improof.catalog import import_problems
from theorembench.store import open_store


@pytest.fixture
def store(tmp_path: Path):
    """The store the commands use by default, with odd-sums (improof_samples.py) imported as active."""
    st = open_store(None)
    path = tmp_path / "problems.yaml"
    path.write_text(odd_sums_yaml(status="active"))
    import_problems(st, path)
    try:
        yield st
    finally:
        st.close()
