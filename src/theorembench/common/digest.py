"""Short hashes of settings and inputs: the keys under which steps, runs and pipelines are stored."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def json_digest(value: Any, length: int = 12, *, ascii_only: bool = False) -> str:
    """The first ``length`` hex digits of SHA-256 over ``value`` as JSON with sorted keys (other values as str).

    ``ascii_only`` escapes non-ASCII characters, as the keys of the older stages were made: keep it
    where a key already exists in users' stores, so that they still find their stored steps.
    """
    blob = json.dumps(value, sort_keys=True, ensure_ascii=ascii_only, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:length]
