"""Running theorembench's command line in a child process, as a user would."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

PYTHON = sys.executable


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment (the test's isolated home, store and fake endpoints) plus ``extra``."""
    env = dict(os.environ)
    env.update(extra)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def write_items(path: Path, items: list[dict]) -> Path:
    path.write_text(json.dumps(items, ensure_ascii=False))
    return path
