"""Host side of the sandboxed runs: one sandboxed process per role, whose output is read as signed data only.

A template's code runs in three separate sandboxed processes, side by side, none of which shares any
state with the checks (those run here, on the host, on what the processes returned):

- ``brute``: the small-case check's brute force on the declared small cases, then on larger cases
  while its time budget affords them (:mod:`crosscheck`);
- ``formula``: ``formal_solution`` on the same cases and on every instance, rounding to nearest,
  with one hash seed;
- ``replay``: ``formal_solution`` on every instance again, with another hash seed, once rounding to
  nearest (determinism across processes) and once each rounding upward and downward (a result that
  went through floats changes with the rounding mode).

Each role gets a fresh key on standard input; the harness signs every line with it, and only lines
with a right signature, in sequence, are read (``harness`` says why nothing else can write them).
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.methods.eternal import values as V
from theorembench.sandbox import SandboxResult
from theorembench.sandbox.providers import LocalSandbox, Sandbox

HARNESS = Path(__file__).with_name("harness.py").read_text()
PRELOAD = ("sympy", "numpy", "scipy", "mpmath", "networkx")  # imported once per role, before the runs start
MAX_OUTPUT_BYTES = 64_000_000


@dataclass
class Run:
    """One run's outcome: status ok (``value`` decoded), timeout or error (``error`` says why)."""

    status: str
    value: Any = None
    error: str = ""
    exact_expression: str = ""
    wall_s: float | None = None
    cpu_s: float | None = None
    mode_ok: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class RoleOutcome:
    """What one role's process reported: runs by id, the ids it started, and how the process ended."""

    role: str
    sandbox: SandboxResult
    runs: dict[str, Run] = field(default_factory=dict)
    started: set[str] = field(default_factory=set)
    stopped: bool = False
    rounding: bool = False
    tampered: str = ""
    failure: str = ""

    def missing(self, run_id: str) -> str:
        """Why a run has no outcome (the process ended before or while it ran)."""
        when = "while this instance ran" if run_id in self.started else "before this instance ran"
        if self.tampered:
            return f"the harness's output was tampered with ({self.tampered}); nothing of it is used"
        if self.failure:
            return f"the harness failed: {self.failure}"
        sb = self.sandbox
        if sb.ok:  # the process ended early without being stopped: the code ended it
            return f"the sandboxed process ended without a result ({when})"
        return f"sandbox {sb.status}: {sb.reason} ({when})"


def hash_seeds(seed: int, template_id: str) -> tuple[int, int]:
    """Two different, reproducible PYTHONHASHSEED values for the formula and the replay of one template."""
    digest = hashlib.sha256(f"{seed}:{template_id}".encode()).digest()
    first = 1 + int.from_bytes(digest[:4], "big") % 4_000_000_000
    second = 1 + (first + 1 + int.from_bytes(digest[4:8], "big") % 1_000_000) % 4_000_000_000
    return first, second


def imported(code: str) -> list[str]:
    """The heavy libraries the code imports (read from its syntax tree; nothing is run)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return [n for n in PRELOAD if n in names]


def read_signed(stdout: str, key: bytes) -> tuple[list[dict], str]:
    """The lines whose signature is right, and why the stream is not intact ("" when it is)."""
    lines: list[dict] = []
    expected = 1
    for raw in stdout.splitlines():
        parts = raw.split("\t", 2)
        if len(parts) != 3 or not parts[0].isdigit():
            continue  # not the harness's (the harness writes nothing unsigned)
        body = f"{parts[0]}\t{parts[2]}".encode()
        if not hmac.compare_digest(hmac.new(key, body, hashlib.sha256).hexdigest(), parts[1]):
            continue
        if int(parts[0]) != expected:
            return [], f"signed line {parts[0]} where line {expected} was due"
        expected += 1
        try:
            line = json.loads(parts[2])
        except ValueError:
            return [], f"signed line {parts[0]} is not JSON"
        if isinstance(line, dict):
            lines.append(line)
    return lines, ""


def _run_of(line: dict) -> Run:
    status = line.get("status")
    timing = {k: line[k] for k in ("wall_s", "cpu_s") if isinstance(line.get(k), int | float)}
    if status == "ok":
        try:
            value = V.decode(line.get("value"))
        except V.BadValue as exc:
            return Run("error", error=f"the result is not usable: {exc}", **timing)
        expr = line.get("exact_expression")
        return Run("ok", value=value, exact_expression=expr if isinstance(expr, str) else "",
                   mode_ok=line.get("mode_ok") is True, **timing)  # fmt: skip
    return Run("timeout" if status == "timeout" else "error", error=str(line.get("error", ""))[:1000],
               mode_ok=line.get("mode_ok") is True, **timing)  # fmt: skip


def run_role(role: str, code: str, runs: list[dict], *, extend: dict | None = None, hash_seed: int, per_run_s: float,
             timeout_s: float, memory_mb: int, box: Sandbox | None = None) -> RoleOutcome:  # fmt: skip
    """One sandboxed process running ``code`` for each of ``runs`` (``{"id", "params", "mode", "required"}``), in
    ``box`` (:func:`theorembench.sandbox.providers.open_sandbox`; None: the theorembench sandbox)."""
    key = secrets.token_hex(32).encode()
    job = {"role": role, "code": code, "per_run_s": per_run_s, "preload": imported(code), "runs": runs,
           "extend": extend}  # fmt: skip
    res = (box or LocalSandbox()).run(["python", "-s", "-P", "harness.py", "job.json"], stdin=key,
                                      files={"harness.py": HARNESS, "job.json": json.dumps(job)}, timeout_s=timeout_s,
                                      memory_mb=memory_mb, max_output_bytes=MAX_OUTPUT_BYTES,
                                      env={"PYTHONHASHSEED": str(hash_seed)})  # fmt: skip
    lines, tampered = read_signed(res.stdout, key)
    out = RoleOutcome(role=role, sandbox=res, tampered=tampered)
    for line in lines:
        kind, run_id = line.get("kind"), str(line.get("id", ""))
        if kind == "hello":
            out.rounding = line.get("rounding") is True
        elif kind == "start":
            out.started.add(run_id)
        elif kind == "run":
            out.runs[run_id] = _run_of(line)
        elif kind == "stop":
            out.stopped = True
        elif kind == "fail":
            out.failure = str(line.get("error", ""))[:300]
    return out
