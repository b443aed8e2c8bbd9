"""The sandbox's settings file: ``[sandbox] strict = true`` refuses to run below full isolation.

Looked up at ``$THEOREMBENCH_SANDBOX_CONFIG`` or ``<home>/sandbox.toml``; the environment variable
``THEOREMBENCH_SANDBOX_STRICT`` (1/0, true/false) wins over the file, and a ``strict=`` argument
(the ``--strict/--no-strict`` option) wins over both.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from theorembench.common.errors import UserError
from theorembench.common.paths import home
from theorembench.common.tomlconfig import load_layered

STRICT_ENV = "THEOREMBENCH_SANDBOX_STRICT"
CONFIG_ENV = "THEOREMBENCH_SANDBOX_CONFIG"
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}
DEFAULT_TOML = """
[sandbox]
# refuse to run code below full isolation (namespaces, seccomp, process limit)
strict = false
"""


class _Sandbox(BaseModel):
    model_config = ConfigDict(extra="forbid")
    strict: bool = False


class SandboxSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sandbox: _Sandbox = _Sandbox()


def settings_path() -> Path:
    return Path(os.environ.get(CONFIG_ENV) or home() / "sandbox.toml")


def load_settings() -> SandboxSettings:
    path = settings_path()
    return load_layered(DEFAULT_TOML, SandboxSettings, path if path.is_file() else None, {}, UserError)


def strict_default() -> bool:
    """Strict mode from ``$THEOREMBENCH_SANDBOX_STRICT``, else from the settings file (default off)."""
    value = os.environ.get(STRICT_ENV, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if value:
        raise UserError(f"{STRICT_ENV}={value!r}: use 1 or 0")
    return load_settings().sandbox.strict
