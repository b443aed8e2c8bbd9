"""The tool manifest: what generated code can use inside the sandbox, and host tools found."""

from __future__ import annotations

import json
import shutil

from theorembench.sandbox.runner import run_sandboxed

PYTHON_PACKAGES = ("sympy", "numpy", "mpmath", "networkx")
HOST_TOOLS = {"sage": "SageMath", "gap": "GAP", "gp": "PARI/GP"}
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


_cache: dict[str, dict] = {}


def tool_manifest(timeout_s: float = 60.0) -> dict:
    """Python packages importable inside the sandbox (name -> version or None) and host tools (path or None).

    Host tools (SageMath, GAP, PARI/GP) are used when present and never required; they are
    outside the interpreter's folders, so a sandboxed run sees them only where they live under /usr.
    A complete manifest is found once per process (one sandboxed run) and then reused.
    """
    if "manifest" in _cache:
        return json.loads(json.dumps(_cache["manifest"]))
    manifest = _find(timeout_s)
    if manifest["status"] == "ok":
        _cache["manifest"] = manifest
    return manifest


def _find(timeout_s: float) -> dict:
    res = run_sandboxed(script=_CHECK % (PYTHON_PACKAGES,), timeout_s=timeout_s)
    try:
        packages = json.loads(res.stdout)
    except ValueError:
        packages = {name: None for name in PYTHON_PACKAGES}
    host = {}
    for exe, name in HOST_TOOLS.items():
        path = shutil.which(exe)
        host[exe] = {"name": name, "path": path, "inside": bool(path and path.startswith("/usr/"))}
    return {"python": packages, "host": host, "isolation": res.isolation, "status": res.status}
