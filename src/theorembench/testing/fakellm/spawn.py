"""Child-process mode: ``spawn()`` starts ``python -m theorembench.testing.fakellm``, a handle drives it over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Mapping

from theorembench.testing.fakellm.addresses import Addresses
from theorembench.testing.fakellm.script import load_script

_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class SpawnedFakeLLM(Addresses):
    """Handle on a fake server running in a child process (see :func:`spawn`)."""

    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc = proc
        self.port = port

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _call(self, method: str, path: str, payload: Any = None, timeout: float = 30) -> Any:
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with _NO_PROXY_OPENER.open(req, timeout=timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            raise RuntimeError(f"fakellm {method} {path} failed: {exc.code} {detail}") from None

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/_stats")

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._call("GET", "/_requests")

    def set_script(self, script: Mapping[str, Any] | str | os.PathLike[str] | None) -> None:
        self._call("POST", "/_script", load_script(script))

    def reset(self) -> None:
        self._call("POST", "/_reset", {})

    def release(self) -> None:
        self._call("POST", "/_release", {})

    def release_batches(self) -> None:
        self._call("POST", "/_release_batches", {})

    def stop(self, timeout: float = 10) -> None:
        """Terminate the child and wait for it (kills it if it does not exit in time)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> SpawnedFakeLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spawn(
    script: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    keep_bodies: bool = False,
    *,
    port: int = 0,
    startup_timeout: float = 30.0,
) -> SpawnedFakeLLM:
    """Start ``python -m theorembench.testing.fakellm`` in a child process.

    The script is written to a temporary JSON file for the child; the bound port
    is read from the child's first stdout line (``PORT <n>``).
    """
    raw = load_script(script)
    fd, path = tempfile.mkstemp(prefix="fakellm-script-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(raw, fh)
    cmd = [sys.executable, "-m", "theorembench.testing.fakellm", "--port", str(port), "--script", path]
    if not keep_bodies:
        cmd.append("--no-bodies")
    env = dict(os.environ)
    src_root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = src_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc: subprocess.Popen[str] = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline() if proc.stdout else ""), daemon=True)
    reader.start()
    reader.join(startup_timeout)
    try:
        os.unlink(path)
    except OSError:  # pragma: no cover
        pass
    first = line[0].strip() if line else ""
    if not first.startswith("PORT "):
        proc.kill()
        proc.wait(timeout=10)
        raise RuntimeError(f"fakellm child did not report its port (got {first!r}, exit code {proc.returncode})")
    return SpawnedFakeLLM(proc, int(first.split()[1]))
