"""The tool manifest: what generated code can use inside the sandbox, and which host tools really run there.

A host tool (SageMath, GAP, PARI/GP) is offered to a model only when it runs *inside*: the sandbox
has its own fixed PATH and shows only /usr, the interpreter and the work folder, so a tool the host
finds elsewhere (``/opt/sage``, ``~/bin``) would fail there with "No such file or directory". The
decision is made by running a trivial computation with the tool in the sandbox, never from its path.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from theorembench.sandbox.runner import run_sandboxed

PYTHON_PACKAGES = ("sympy", "numpy", "mpmath", "networkx")
# exe -> (name, command run inside, its stdin); each prints 42 when the tool works
HOST_TOOLS: dict[str, tuple[str, list[str], bytes | None]] = {
    "sage": ("SageMath", ["sage", "-c", "print(6*7)"], None),
    "gap": ("GAP", ["gap", "-q", "-b"], b'Print(6*7, "\\n");\nQUIT;\n'),
    "gp": ("PARI/GP", ["gp", "-q", "-f"], b"print(6*7)\nquit\n"),
}
_CHECK = """
import importlib, json
out = {}
for name in %r:
    try:
        out[name] = getattr(importlib.import_module(name), "__version__", "present")
    except Exception as exc:
        out[name] = None
print(json.dumps(out))
"""

_cache: dict[object, dict] = {}


def check_tool(argv: list[str], stdin: bytes | None = None, timeout_s: float = 120.0) -> dict:
    """Run ``argv`` in the sandbox (our own fixed command: weaker isolation is accepted for it) and say whether it
    printed 42: ``{"inside": bool, "check": "ok" or why not}``."""
    res = run_sandboxed(list(argv), stdin=stdin, timeout_s=timeout_s, memory_mb=8192, accept_weak_isolation=True)
    if res.ok and "42" in res.stdout.split():
        return {"inside": True, "check": "ok"}
    tail = " ".join((res.stderr or res.stdout).split())[-200:]
    why = f"{res.status}{': ' + res.reason if res.reason else ''}{'; ' + tail if tail else ''}"
    return {"inside": False, "check": f"does not run inside the sandbox ({why})", "status": res.status}


def host_tool(exe: str, timeout_s: float = 120.0) -> dict:
    """One host tool: its path on the host (None when absent) and whether it runs inside (checked once per path)."""
    name, argv, stdin = HOST_TOOLS[exe]
    path = shutil.which(exe)
    if path is None:
        return {"name": name, "path": None, "inside": False, "check": "not installed"}
    key = (exe, os.path.realpath(path))
    if key not in _cache:
        found = check_tool(argv, stdin, timeout_s)
        if found.pop("status", "error") == "timeout":  # a slow start is not an answer: check again next time
            return {"name": name, "path": path, **found}
        _cache[key] = found
    return {"name": name, "path": path, **_cache[key]}


def tool_runs_inside(exe: str) -> bool:
    """Whether the host tool ``exe`` (sage, gap, gp) is installed and really runs inside the sandbox."""
    return bool(host_tool(exe)["inside"])


def packages_in(box: Any, timeout_s: float = 60.0) -> dict:
    """Python's version and the packages importable in another sandbox (``box.run``: a docker or k8s one)."""
    script = _CHECK % (PYTHON_PACKAGES,)
    script = script.replace("print(json.dumps(out))", "out['python'] = __import__('platform').python_version()\n"
                                                      "print(json.dumps(out))")  # fmt: skip
    res = box.run(script=script, timeout_s=timeout_s)
    try:
        return dict(json.loads(res.stdout))
    except ValueError:
        return {"python": None, **{name: None for name in PYTHON_PACKAGES}}


def tool_manifest(timeout_s: float = 60.0) -> dict:
    """Python packages importable inside the sandbox (name -> version or None) and host tools (path, inside).

    Host tools are used when they run inside and never required. The packages are found once
    per process (one sandboxed run of our own script, so weaker isolation is accepted for it).
    """
    if "manifest" not in _cache:
        res = run_sandboxed(script=_CHECK % (PYTHON_PACKAGES,), timeout_s=timeout_s, accept_weak_isolation=True)
        try:
            packages = json.loads(res.stdout)
        except ValueError:
            packages = {name: None for name in PYTHON_PACKAGES}
        found = {"python": packages, "isolation": res.isolation, "status": res.status}
        if res.status != "ok":
            return found | {"host": {exe: host_tool(exe) for exe in HOST_TOOLS}}
        _cache["manifest"] = found
    manifest = json.loads(json.dumps(_cache["manifest"]))
    return manifest | {"host": {exe: host_tool(exe) for exe in HOST_TOOLS}}
