"""The command line of one sandboxed run: the filesystem view, the environment, the stages.

Full isolation: ``[stage0 when root] bwrap ... -- python -I -S -c LAUNCHER {limits, argv}``; which
host folders the view holds is decided in :mod:`binds`.
Fallback (no bubblewrap or no user namespaces): ``python -I -S -c LAUNCHER ...`` in a new
session with a clean environment, from the work folder.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from theorembench.sandbox.binds import TOP, interpreter_paths, masked_folders

WORK = "/sandbox"  # the work folder, as the sandboxed program sees it
SANDBOX_UID = 65534  # host uid the sandbox runs as when the caller is root (nobody)
_BASE_ENV = {"LANG": "C.UTF-8", "HOME": "/tmp", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1",
             "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
             "MKL_NUM_THREADS": "1"}  # fmt: skip
_ETC = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf",
        "mime.types"]  # fmt: skip


def _source(name: str) -> str:
    return (Path(__file__).with_name(name)).read_text()


LAUNCHER = _source("launcher.py")
STAGE0 = _source("stage0.py")


def work_relative(path: str) -> Path:
    """A path as the sandboxed program names it (relative, or absolute under /sandbox) made relative to the
    work folder; ValueError when it names anything else or climbs with '..'."""
    rel = Path(path)
    if rel.is_absolute():
        try:
            rel = rel.relative_to(WORK)
        except ValueError:
            raise ValueError(f"{path} is outside the sandbox's work folder {WORK}") from None
    if ".." in rel.parts:
        raise ValueError(f"{path} must not contain '..'")
    return rel


def inside(work: Path, path: Path) -> bool:
    """Whether ``path``, with every symbolic link resolved, is the work folder or lies under it."""
    root, real = os.path.realpath(work), os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def python() -> str:
    """The sandbox's Python: the caller's interpreter (its venv included), seen at the same path inside."""
    return sys.executable


def clean_env(env_allow: list[str] | tuple[str, ...] = (), for_bwrap: bool = True) -> dict[str, str]:
    """The environment inside: a fixed base plus the allow-listed variables of the caller."""
    bindir = os.path.dirname(python())
    env = dict(_BASE_ENV, PATH=f"{bindir}:/usr/local/bin:/usr/bin:/bin")
    if not for_bwrap:
        env["HOME"] = env["TMPDIR"] = os.getcwd()
    for name in env_allow:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def covers(paths: list[str]) -> list[list[object]]:
    """For paths an ordinary user cannot reach: [first closed ancestor, [paths under it]]."""
    out: dict[str, list[str]] = {}
    for path in paths:
        parts = Path(path).parts
        for i in range(2, len(parts)):
            folder = str(Path(*parts[:i]))
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                out.setdefault(folder, []).append(path)
                break
    return [[folder, sorted(set(ps))] for folder, ps in sorted(out.items())]


def launcher_argv(rlimits: dict[str, list[int]], seccomp_hex: str, argv: list[str],
                  report_fd: int | None = None) -> list[str]:  # fmt: skip
    cfg = {"rlimits": rlimits, "seccomp": seccomp_hex, "argv": argv, "report_fd": report_fd}
    return [python(), "-I", "-S", "-c", LAUNCHER, json.dumps(cfg)]


def bwrap_argv(bwrap: str, workdir: Path, env: dict[str, str], inner: list[str], tmp_mb: int = 256,
               chdir: str = WORK) -> list[str]:  # fmt: skip
    """bubblewrap: every namespace, a read-only system, the interpreter, one writable work folder.

    Order matters: a later mount hides what an earlier one put at or under its path. The private /tmp
    and the masks come before the interpreter's folders, which may live under /tmp or under a mask.
    """
    argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox", "--clearenv",
            "--ro-bind", "/usr", "/usr"]  # fmt: skip
    for top in TOP:
        src = Path("/") / top
        if src.is_symlink():
            argv += ["--symlink", os.readlink(src), str(src)]
        elif src.is_dir():
            argv += ["--ro-bind", str(src), str(src)]
    for name in _ETC:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for folder in masked_folders():
        argv += ["--tmpfs", folder]
    argv += ["--size", str(tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    for path in interpreter_paths():
        argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--bind", str(workdir), WORK, "--chdir", chdir]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv + ["--", *inner]


def stage0_argv(uid: int | None, bind_paths: list[str], inner: list[str]) -> list[str]:
    cfg = {"uid": uid, "gid": uid, "covers": covers(bind_paths) if uid is not None else [], "argv": inner}
    return [python(), "-I", "-S", "-c", STAGE0, json.dumps(cfg)]
