"""Which isolation layers this machine gives, found once per process by running a real sandbox.

The probe starts the full sandbox with a small program that reports, from inside, its uid, its
pid, the network interfaces it sees, its seccomp and no-new-privs state, its process limit, and
which of the host's private paths (the project, the store, the home folder: see :mod:`binds`) it
can see; the layers are read from that evidence, not assumed from the command line.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from theorembench.sandbox import binds, layout, seccomp
from theorembench.sandbox.execute import execute

FULL = ("userns", "netns", "pidns", "ipcns", "utsns", "mountns(bwrap)", "nproc", "seccomp", "no-new-privs",
        "rlimits", "clean-env", "new-session")  # fmt: skip
# a run in a container of Inspect's docker or k8s provider (see :mod:`containers`): full when the container has no
# network interface but loopback, runs as a non-root user without capabilities, under no-new-privs and a seccomp
# filter, with a process and a memory limit (all read from inside, like the layers above)
CONTAINER = "container"
CONTAINER_FULL = (CONTAINER, "no-network", "non-root", "no-capabilities", "no-new-privs", "seccomp", "pids-limit",
                  "memory-limit")  # fmt: skip
_INSPECT = r"""
import os, resource, socket, sys, threading
def threads():  # with a process limit of 8, fewer than 16 threads start
    stop, started = threading.Event(), 0
    for _ in range(16):
        try:
            threading.Thread(target=stop.wait, daemon=True).start()
            started += 1
        except RuntimeError:
            break
    stop.set()
    return started
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
nets = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
print(__import__("json").dumps({"uid": os.getuid(), "pid": os.getpid(), "nets": nets,
      "seccomp": status.get("Seccomp", "").strip(), "nnp": status.get("NoNewPrivs", "").strip(),
      "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0], "hostname": socket.gethostname(),
      "root_entries": sorted(os.listdir("/")), "env": sorted(os.environ), "threads": threads(),
      "visible": [p for p in __import__("json").loads(sys.argv[1]) if os.path.lexists(p)]}))
"""


@dataclass
class Probe:
    """What this machine supports: ``mode`` is "bwrap" (full) or "fallback"; ``layers`` as verified."""

    mode: str
    layers: list[str]
    root: bool
    bwrap: str | None
    problems: list[str] = field(default_factory=list)
    evidence: dict = field(default_factory=dict)

    @property
    def full(self) -> bool:
        return all(layer in self.layers for layer in FULL)

    def to_dict(self) -> dict:
        return {"mode": self.mode, "full": self.full, "layers": self.layers, "missing": [x for x in FULL if x not in
                self.layers], "root": self.root, "bwrap": self.bwrap, "problems": self.problems}  # fmt: skip


def full_argv(bwrap: str, workdir: Path, env: dict[str, str], rlimits: dict[str, list[int]], argv: list[str],
              report_fd: int | None = None, chdir: str = layout.WORK) -> list[str]:  # fmt: skip
    """The full sandbox's command line (stage0 first when the caller is root)."""
    launcher = layout.launcher_argv(rlimits, seccomp.filter_program().hex(), argv, report_fd)
    inner = layout.bwrap_argv(bwrap, workdir, env, launcher, chdir=chdir)
    uid = layout.SANDBOX_UID if os.geteuid() == 0 else None
    return layout.stage0_argv(uid, [*binds.interpreter_paths(), str(workdir)], inner)


def prepare_workdir(path: Path) -> None:
    """The work folder must be writable by the sandbox's user (host uid 65534 when the caller is root)."""
    if os.geteuid() == 0:
        for root, dirs, files in os.walk(path):
            for name in [root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)]:
                os.lchown(name, layout.SANDBOX_UID, layout.SANDBOX_UID)


@functools.cache
def probe() -> Probe:
    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Probe("fallback", _fallback_layers(), root, None, ["bubblewrap (bwrap) is not installed"])
    from theorembench.sandbox.result import Limits

    with tempfile.TemporaryDirectory(prefix="tb-probe-") as tmp:
        work = Path(tmp)
        prepare_workdir(work)
        env = layout.clean_env()
        limits = Limits(timeout_s=20, processes=8).rlimits()
        hidden = binds.hidden_samples(binds.interpreter_paths())
        argv = full_argv(bwrap, work, env, limits, [layout.python(), "-I", "-c", _INSPECT, json.dumps(hidden)])
        out = execute(argv, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, cwd=work, timeout_s=20,
                      max_output_bytes=100_000)  # fmt: skip
    try:
        ev = json.loads(out.stdout)
    except ValueError:
        problem = (out.stderr.decode(errors="replace").strip() or f"exit {out.returncode}")[-300:]
        return Probe("fallback", _fallback_layers(), root, bwrap, [f"bubblewrap does not run here: {problem}"])
    layers = ["userns"]
    layers += ["netns"] if ev["nets"] == ["lo"] else []
    layers += ["pidns"] if ev["pid"] <= 4 else []
    layers += ["ipcns", "utsns"] if ev["hostname"] == "sandbox" else []
    expected = {"usr", "etc", "tmp", "proc", "dev", layout.WORK.strip("/"), *binds.TOP}
    expected |= {Path(p).parts[1] for p in binds.interpreter_paths()}
    layers += ["mountns(bwrap)"] if set(ev["root_entries"]) <= expected and not ev["visible"] else []
    layers += ["nproc"] if ev["threads"] < 16 else []
    layers += ["seccomp"] if ev["seccomp"] == "2" else []
    layers += ["no-new-privs"] if ev["nnp"] == "1" else []
    layers += ["rlimits", "clean-env", "new-session"]
    problems = [f"layer not in force: {x}" for x in FULL if x not in layers]
    if ev["visible"]:
        problems.append(f"the sandbox sees private paths of the host: {', '.join(ev['visible'][:5])}")
    return Probe("bwrap", layers, root, bwrap, problems, ev)


def _fallback_layers() -> list[str]:
    layers = ["rlimits", "clean-env", "new-session", "no-new-privs"]
    return layers + (["seccomp"] if seccomp.filter_program() else [])
