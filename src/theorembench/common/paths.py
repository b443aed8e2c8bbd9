"""Where theorembench keeps its files.

Everything lives under one home folder (``THEOREMBENCH_HOME``, default
``./.theorembench`` in the working directory) so that a project folder carries
its own store, response cache and logs. The store can be pointed elsewhere with
``--db`` or ``THEOREMBENCH_DB``.
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """The home folder, as an absolute path: paths saved in the store must not depend on the working directory."""
    return Path(os.environ.get("THEOREMBENCH_HOME", ".theorembench")).expanduser().absolute()


def default_db() -> str:
    """``$THEOREMBENCH_DB`` as given (a path or a database URL: a URL must not go through ``Path``,
    which would fold its ``//``), or the store file in the home folder."""
    env = os.environ.get("THEOREMBENCH_DB")
    if env:
        return os.path.expanduser(env) if env.startswith("~") else env
    return str(home() / "theorembench.db")


def runtime_dir() -> Path:
    """Folder for state shared between processes (the local model server)."""
    env = os.environ.get("THEOREMBENCH_RUNTIME")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "theorembench"
    path.mkdir(parents=True, exist_ok=True)
    return path
