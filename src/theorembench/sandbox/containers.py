"""``--sandbox docker`` and ``--sandbox k8s``: Inspect's own providers (``docker``; ``k8s`` from inspect-k8s-sandbox).

``docker`` runs each program in a container of one compose file written here (named by its content,
under ``<home>/sandbox/``): the image of ``[sandbox] image`` (``$THEOREMBENCH_SANDBOX_IMAGE`` wins;
default ``python:3.11-slim``), ``network_mode: none``, user 65534, every capability dropped,
``no-new-privileges``, a process and a memory limit, and a tmpfs work folder ``/sandbox``. ``k8s``
gives Inspect's k8s provider the Helm values file of ``[sandbox] k8s_values`` (or none: its chart's
defaults).

The isolation is read from inside, as the theorembench sandbox's is (:mod:`probe`): a probe container
reports its network interfaces, uid, effective capabilities, no-new-privs and seccomp state and its
cgroup limits, and the layers follow from that evidence. Full (``CONTAINER_FULL``) means loopback only,
non-root, no capabilities, no-new-privs, seccomp, a process and a memory limit, which our docker
compose file asks for. A pod with a network interface (the k8s chart's case, whatever network policy
filters it) is below full isolation, so it runs only with weaker isolation accepted, like any other.

Each run gets a fresh container (the provider's ``sample_init``, then ``sample_cleanup``), as each
theorembench run gets a fresh work folder. Outside an Inspect task the provider's coroutines run on one
event loop of our own, in one context (its cleanup registry lives in a context variable).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import hashlib
import importlib.util
import json
import math
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from theorembench.common.errors import InvalidSetting
from theorembench.common.paths import home
from theorembench.sandbox.policy import ACCEPT_OPTION, SandboxError, describe, weak_isolation_accepted
from theorembench.sandbox.probe import CONTAINER
from theorembench.sandbox.result import Limits, SandboxResult
from theorembench.sandbox.settings import ACCEPT_ENV, load_settings, settings_path

IMAGE_ENV = "THEOREMBENCH_SANDBOX_IMAGE"
WORK = "/sandbox"
LEVEL = {"docker": "container", "k8s": "pod"}
_MEMORY_MARKERS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory", "Unable to allocate")
# what the probe prints, one key=value a line (sh and coreutils only, so any image with a shell will do)
PROBE = r"""
echo "uid=$(id -u)"
grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status | tr -d ' \t' | sed 's/:/=/'
echo "nets=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ',')"
echo "pids=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || echo none)"
echo "memory=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes \
2>/dev/null || echo none)"
"""
_layers_seen: dict[tuple[str, str | None], list[str]] = {}  # (kind, config) -> the probe's layers, once a process


def unavailable(kind: str) -> str:
    """Why the sandbox ``kind`` cannot run on this machine, in one line after the setting's name ("" when it can):
    ``docker: the docker daemon is not reachable: ...``, which the command line shows as ``--sandbox docker: ...``."""
    if kind == "k8s":
        if importlib.util.find_spec("k8s_sandbox") is None:
            return "k8s needs the inspect-k8s-sandbox package (pip install inspect-k8s-sandbox)"
        if shutil.which("helm") is None:
            return "k8s needs the helm command (Helm 3.10 or later, https://helm.sh/docs/intro/install/)"
        if not _kube_config():
            return ("k8s needs a cluster: no kubeconfig (set KUBECONFIG or write ~/.kube/config) and not inside a "
                    "pod")  # fmt: skip
        return ""
    exe = shutil.which("docker")
    if exe is None:
        return "docker: the docker command is not installed (Docker Engine with its compose plugin)"
    why = _fails([exe, "info", "--format", "{{.ServerVersion}}"])
    if why:
        return f"docker: the docker daemon is not reachable: {why} (start it, or point DOCKER_HOST at one)"
    why = _fails([exe, "compose", "version"])
    if why:
        return f"docker: the docker compose plugin is missing: {why} (install docker-compose-plugin)"
    return ""


def _kube_config() -> bool:
    """Whether the Kubernetes client finds a cluster: a kubeconfig file, or the service account of a pod."""
    files = [Path(x) for x in os.environ.get("KUBECONFIG", "").split(os.pathsep) if x]
    files = files or [Path.home() / ".kube" / "config"]
    return any(f.is_file() for f in files) or bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


class SandboxUnavailable(InvalidSetting, SandboxError):
    """The sandbox setting names a provider this machine lacks: ``sandbox docker: the docker daemon ...``."""

    def __init__(self, why: str) -> None:
        super().__init__("sandbox", template="{setting} " + why.replace("{", "{{").replace("}", "}}"))


def _fails(argv: list[str]) -> str:
    """The first line of what ``argv`` said when it failed ("" when it succeeded)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    said = [x.strip() for x in (done.stderr + "\n" + done.stdout).splitlines() if x.strip()]
    if done.returncode == 0 and not (argv[1] == "info" and not done.stdout.strip()):
        return ""
    return said[0] if said else f"exit code {done.returncode}"


def layers_from(evidence: str) -> list[str]:
    """The container's layers, read from what :data:`PROBE` printed inside it."""
    ev = dict(line.strip().split("=", 1) for line in evidence.splitlines() if "=" in line)
    nets = [n for n in ev.get("nets", "").split(",") if n]
    checks = {"no-network": nets == ["lo"], "non-root": ev.get("uid", "0").isdigit() and ev.get("uid") != "0",
              "no-capabilities": _hex(ev.get("CapEff")) == 0, "no-new-privs": ev.get("NoNewPrivs") == "1",
              "seccomp": ev.get("Seccomp") == "2", "pids-limit": ev.get("pids", "").isdigit(),
              "memory-limit": ev.get("memory", "").isdigit() and int(ev["memory"]) < 2**60}  # fmt: skip
    return [CONTAINER, *(name for name, ok in checks.items() if ok)]


def _hex(value: str | None) -> int | None:
    try:
        return int(value or "", 16)
    except ValueError:
        return None


def compose_text(image: str, memory_mb: int, processes: int) -> str:
    """The docker compose file (JSON, which YAML reads): one service, no network, non-root, nothing privileged."""
    service = {"image": image, "command": ["tail", "-f", "/dev/null"], "init": True, "network_mode": "none",
               "user": "65534:65534", "working_dir": WORK, "cap_drop": ["ALL"],
               "security_opt": ["no-new-privileges:true"], "pids_limit": processes, "mem_limit": f"{memory_mb}m",
               "tmpfs": [f"{WORK}:mode=1777,size=512m", "/tmp:mode=1777,size=256m"]}  # fmt: skip
    return json.dumps({"services": {"default": service}}, indent=2) + "\n"


def provider_config(kind: str, *, memory_mb: int = 2048, processes: int = 64) -> str | None:
    """The provider's config: the path of our compose file (docker), the values file or None (k8s)."""
    settings = load_settings().sandbox
    if kind == "k8s":
        if not settings.k8s_values:
            return None
        values = Path(settings.k8s_values).expanduser()
        if not values.is_file():
            raise SandboxError(f"[sandbox] k8s_values = {values}: no such file ({settings_path()})")
        return str(values.absolute())
    image = os.environ.get(IMAGE_ENV) or settings.image
    text = compose_text(image, memory_mb, processes)
    path = home() / "sandbox" / f"docker-{hashlib.sha256(text.encode()).hexdigest()[:16]}-compose.yaml"
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return str(path)


def record(kind: str, layers: Sequence[str], accepted: bool) -> dict[str, Any]:
    """The isolation record of runs in ``kind`` with these layers (what the results files keep)."""
    return {"provider": kind, "level": LEVEL[kind], **describe(layers, accepted)}


def refuse(kind: str, layers: Sequence[str], accept: bool | None, purpose: str) -> None:
    """A one-line SandboxError when the container is below full isolation and weaker isolation is not accepted."""
    found = describe(layers)
    if found["full"] or weak_isolation_accepted(accept):
        return
    raise SandboxError(f"refusing to run {purpose} below full isolation ({kind} sandbox): the {LEVEL[kind]} "
                       f"lacks {', '.join(found['missing'])}; to accept weaker isolation pass {ACCEPT_OPTION} "
                       f"or set {ACCEPT_ENV}=1")  # fmt: skip


def container_isolation(kind: str, accept: bool | None, *, purpose: str) -> dict[str, Any]:
    """Before any work: what is missing (one line), else the layers a probe container shows, checked and recorded."""
    with ContainerSandbox.start(kind, accept, purpose=purpose) as box:
        return record(kind, box.layers, weak_isolation_accepted(accept))


class ContainerSandbox:
    """Inspect's ``docker`` or ``k8s`` provider, driven outside an Inspect task: one task, a fresh sample a run."""

    def __init__(self, kind: str, config: str | None, memory_mb: int) -> None:
        from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

        self.kind, self.config, self.memory_mb = kind, config, memory_mb
        self.provider: Any = registry_find_sandboxenv(kind)
        self.task = f"theorembench-{kind}-{os.getpid()}"
        self.layers: list[str] = []
        self._context = contextvars.Context()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"theorembench-{kind}", daemon=True)
        self._thread.start()
        self._started = False

    @classmethod
    def start(cls, kind: str, accept: bool | None = None, *, memory_mb: int = 2048, processes: int = 64,
              purpose: str = "sandboxed code") -> ContainerSandbox:  # fmt: skip
        """Checked (one line naming what is missing), started, probed, and refused below full isolation unless
        weaker isolation is accepted."""
        why = unavailable(kind)
        if why:
            raise SandboxUnavailable(why)
        box = cls.launch(kind, provider_config(kind, memory_mb=memory_mb, processes=processes), memory_mb)
        try:
            refuse(kind, box.probe(), accept, purpose)
        except BaseException:
            box.close()
            raise
        return box

    @classmethod
    def launch(cls, kind: str, config: str | None, memory_mb: int = 2048) -> ContainerSandbox:
        """The provider's task started (its images pulled or built); no probe and no policy (:meth:`start` adds
        both). ``kind`` is any Inspect sandbox provider."""
        box = cls(kind, config, memory_mb)
        try:
            box._call(box.provider.task_init(box.task, box.config))
        except BaseException:
            box.close()
            raise
        box._started = True
        return box

    def probe(self) -> list[str]:
        """The layers of this provider's containers, read from inside one (once a process per kind and config)."""
        key = (self.kind, self.config)
        if key not in _layers_seen:
            res = self.run(["sh", "-c", PROBE], timeout_s=120)
            if not res.ok:
                said = " ".join((res.stderr or res.reason).split())[:300]
                raise SandboxError(f"{self.kind} sandbox: the probe {LEVEL.get(self.kind, 'sandbox')} did not run: "
                                   f"{res.status} {said}")  # fmt: skip
            _layers_seen[key] = layers_from(res.stdout)
        self.layers = list(_layers_seen[key])
        return self.layers

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` on our loop, in our one context, and wait for it (from any thread but the loop's)."""
        done: concurrent.futures.Future = concurrent.futures.Future()

        def settle(task: asyncio.Task) -> None:
            if task.cancelled():
                done.cancel()
            elif task.exception() is not None:
                done.set_exception(task.exception())  # type: ignore[arg-type]
            else:
                done.set_result(task.result())

        self._loop.call_soon_threadsafe(lambda: self._loop.create_task(coro, context=self._context)
                                        .add_done_callback(settle))  # fmt: skip
        return done.result()

    def run(self, argv: Sequence[str] | None = None, *, script: str | None = None,
            files: Mapping[str, str | bytes] | None = None, stdin: bytes | None = None, timeout_s: float = 30.0,
            memory_mb: int = 2048, max_output_bytes: int = 1_000_000,
            env: Mapping[str, str] | None = None) -> SandboxResult:  # fmt: skip
        """One program in a fresh container: the files written into ``/sandbox``, then ``argv`` (``python`` is
        the image's ``python3``) or the Python ``script``, under ``ulimit -v`` and ``-t`` and the wall limit."""
        if (argv is None) == (script is None):
            raise SandboxError("give either a command (argv) or a Python script, not both")
        files = dict(files or {}, **({"main.py": script} if script is not None else {}))
        for name in files:
            if name.startswith("/") or ".." in Path(name).parts:
                raise SandboxError(f"sandbox file name must be relative, without '..': {name}")
        cmd = list(argv) if argv is not None else ["python", "main.py"]
        if not cmd:
            raise SandboxError("empty command")
        if cmd[0] == "python":
            cmd[0] = "python3"
        limits = Limits(timeout_s=timeout_s, memory_mb=min(memory_mb, self.memory_mb),
                        max_output_bytes=max_output_bytes)  # fmt: skip
        return self._call(self._run(cmd, files, stdin, limits, dict(env or {})))

    async def _run(self, cmd: list[str], files: dict[str, str | bytes], stdin: bytes | None, limits: Limits,
                   env: dict[str, str]) -> SandboxResult:  # fmt: skip
        from inspect_ai.util._sandbox.limits import OutputLimitExceededError

        environments = await self.provider.sample_init(self.task, self.config, {})
        box = next(iter(environments.values()))  # the default service comes first
        t0 = time.monotonic()
        status, reason, code, out, err = "ok", "", None, "", ""
        try:
            for name, data in files.items():
                wrote = await box.exec(["sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "sh", f"{WORK}/{name}"],
                                       input=data, cwd=WORK, timeout=60, timeout_retry=False)  # fmt: skip
                if not wrote.success:
                    raise SandboxError(f"{self.kind} sandbox: could not write {name}: {wrote.stderr.strip()[:300]}")
            cpu = int(limits.rlimits()["RLIMIT_CPU"][0])
            limited = ["sh", "-c", 'ulimit -v "$1"; ulimit -t "$2"; shift 2; exec "$@"', "sh",
                       str(limits.memory_mb * 1024), str(cpu), *cmd]  # fmt: skip
            t0 = time.monotonic()
            res = await box.exec(limited, input=stdin, cwd=WORK, env=env or None, timeout=math.ceil(limits.timeout_s),
                                 timeout_retry=False)  # fmt: skip
            code, out, err = res.returncode, res.stdout, res.stderr
        except TimeoutError as exc:
            status, reason = "timeout", f"wall time limit ({limits.timeout_s:g} s)"
            out = str(getattr(exc, "truncated_output", "") or "")
        except OutputLimitExceededError as exc:
            status, reason = "killed", f"output limit ({limits.max_output_bytes} bytes)"
            out = str(getattr(exc, "truncated_output", "") or "")
        finally:
            wall = time.monotonic() - t0
            await self.provider.sample_cleanup(self.task, self.config, environments, False)
        return _judged(status, reason, code, out, err, wall, limits, self.layers)

    def close(self) -> None:
        """The provider's task cleanup, then our loop stopped."""
        try:
            if self._started:
                self._started = False
                self._call(self.provider.task_cleanup(self.task, self.config, True))
        finally:
            if self._loop.is_running():
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=30)
            if not self._loop.is_running():
                self._loop.close()


def _judged(status: str, reason: str, code: int | None, out: str, err: str, wall: float, limits: Limits,
            layers: list[str]) -> SandboxResult:  # fmt: skip
    """The result of one container run, judged as the theorembench sandbox judges its runs."""
    cap = limits.max_output_bytes
    raw_out, raw_err = out.encode(), err.encode()
    over = len(raw_out) > cap or len(raw_err) > cap
    sig = code - 128 if code is not None and 128 < code < 128 + 65 else None
    if status == "ok":
        if over:
            status, reason = "killed", f"output limit ({cap} bytes)"
        elif code == 0:
            pass
        elif any(marker in err[-4000:] for marker in _MEMORY_MARKERS) or code == 137:
            status, reason = "memory", f"memory limit ({limits.memory_mb} MB)"
        elif sig == 24:  # SIGXCPU: ulimit -t
            status, reason = "timeout", f"CPU time limit ({limits.rlimits()['RLIMIT_CPU'][0]} s)"
        else:
            status, reason = "error", f"exit code {code}" if sig is None else f"signal {sig}"
    return SandboxResult(status=status, exit_code=None if sig else code, signal=sig,
                         stdout=raw_out[:cap].decode(errors="replace"), stderr=raw_err[:cap].decode(errors="replace"),
                         stdout_truncated=len(raw_out) > cap, stderr_truncated=len(raw_err) > cap,
                         wall_s=round(wall, 4), cpu_s=0.0, peak_memory_mb=0.0, isolation=list(layers), reason=reason,
                         limits=limits.__dict__.copy())  # fmt: skip
