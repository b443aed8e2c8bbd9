"""The platform over a fresh store, for the web tests (imported by conftest.py).

``app``: SQLite in the test's temp folder; ``any_app``: SQLite and PostgreSQL (``db_url``).
No background workers: a test that needs jobs run calls :func:`theorembench.web.jobs.work_once`.
"""

from __future__ import annotations

import pytest

from theorembench.web.app import create_app


@pytest.fixture
def app(tmp_path):
    made = create_app(str(tmp_path / "web.db"), secret_key="test secret", workers=0)
    yield made
    made.state.store.close()


@pytest.fixture
def any_app(db_url):
    made = create_app(db_url, secret_key="test secret", workers=0)
    yield made
    made.state.store.close()
