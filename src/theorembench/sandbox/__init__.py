"""Isolated execution of code nobody reviewed: bubblewrap namespaces, seccomp, rlimits, a clean environment.

``run_sandboxed`` runs one command or Python script and returns a ``SandboxResult`` that records
the isolation layers in force; ``probe`` says which layers this machine gives; ``tool_manifest``
lists the mathematical tools usable inside.
"""

from theorembench.sandbox.probe import FULL, Probe, probe
from theorembench.sandbox.result import Limits, SandboxResult
from theorembench.sandbox.runner import SandboxError, run_sandboxed, strict_default
from theorembench.sandbox.tools import tool_manifest

__all__ = ["FULL", "Limits", "Probe", "SandboxError", "SandboxResult", "probe", "run_sandboxed", "strict_default",
           "tool_manifest"]  # fmt: skip
