"""``theorembench eternal``: build, instantiate, calibrate, evaluate and audit EternalMath problems."""

from __future__ import annotations

from theorembench.cli import (  # noqa: F401 - they add the commands
    eternal_build,
    eternal_eval,
    eternal_instantiate,
    eternal_release,
)
from theorembench.cli.eternal_app import eternal_app

__all__ = ["eternal_app"]
