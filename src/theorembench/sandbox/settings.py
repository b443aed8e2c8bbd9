"""The sandbox's settings file: ``[sandbox] accept_weak_isolation = true`` runs code below full isolation.

Looked up at ``$THEOREMBENCH_SANDBOX_CONFIG`` or ``<home>/sandbox.toml``; the environment variable
``THEOREMBENCH_ACCEPT_WEAK_ISOLATION`` (1/0, true/false) wins over the file. Without either, the
sandbox refuses to run below full isolation (see :mod:`policy` for the options that win over both).
``image`` (or ``$THEOREMBENCH_SANDBOX_IMAGE``) and ``k8s_values`` configure ``--sandbox docker`` and
``--sandbox k8s`` (:mod:`containers`).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field

from theorembench.common.errors import UserError
from theorembench.common.paths import home
from theorembench.common.settings import Section, Settings

ACCEPT_ENV = "THEOREMBENCH_ACCEPT_WEAK_ISOLATION"
CONFIG_ENV = "THEOREMBENCH_SANDBOX_CONFIG"
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


class _Sandbox(Section):
    accept_weak_isolation: bool = Field(False, description="run model-written code even below full isolation "
                                                           "(namespaces, seccomp, process limit): rlimits only")  # fmt: skip
    image: str = Field("python:3.11-slim", description="the image of --sandbox docker's containers (it needs sh, "
                                                       "timeout and python3, with the packages the code imports)")
    k8s_values: str = Field("", description="a Helm values file for --sandbox k8s (empty: the chart's defaults)")


class SandboxSettings(Settings):
    sandbox: _Sandbox = Field(default_factory=_Sandbox)


def settings_path() -> Path:
    return Path(os.environ.get(CONFIG_ENV) or home() / "sandbox.toml")


def load_settings() -> SandboxSettings:
    path = settings_path()
    return SandboxSettings.load(path if path.is_file() else None)


def accept_from_settings() -> bool:
    """Acceptance of weak isolation from ``$THEOREMBENCH_ACCEPT_WEAK_ISOLATION``, else the settings file (off)."""
    value = os.environ.get(ACCEPT_ENV, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if value:
        raise UserError(f"{ACCEPT_ENV}={value!r}: use 1 or 0")
    return load_settings().sandbox.accept_weak_isolation
