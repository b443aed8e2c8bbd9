"""Isolated execution of code nobody reviewed: bubblewrap namespaces, seccomp, rlimits, a clean environment.

``run_sandboxed`` runs one command or Python script and returns a ``SandboxResult`` that records
the isolation layers in force; ``probe`` says which layers this machine gives; ``require_isolation``
refuses a command below full isolation unless weaker isolation is accepted (``policy``);
``tool_manifest`` lists the mathematical tools usable inside.
"""

from theorembench.sandbox.policy import (
    ACCEPT_OPTION,
    SandboxError,
    accepting_weak_isolation,
    combine,
    describe,
    isolation_record,
    require_isolation,
    summary_line,
    weak_isolation_accepted,
)
from theorembench.sandbox.probe import FULL, Probe, probe
from theorembench.sandbox.result import Limits, SandboxResult
from theorembench.sandbox.runner import run_sandboxed
from theorembench.sandbox.tools import tool_manifest, tool_runs_inside

__all__ = ["ACCEPT_OPTION", "FULL", "Limits", "Probe", "SandboxError", "SandboxResult", "accepting_weak_isolation",
           "combine", "describe", "isolation_record", "probe", "require_isolation", "run_sandboxed", "summary_line",
           "tool_manifest", "tool_runs_inside", "weak_isolation_accepted"]  # fmt: skip
