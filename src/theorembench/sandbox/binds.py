"""What of the host the sandbox shows: the interpreter's own folders, and never the project, the store or a home.

The sandbox's Python is the caller's interpreter (its venv included), bound read-only at the
same paths, wherever it lives: /tmp, /home/…, /opt/…, a symlinked venv, pyenv under /root.
A folder is bound whole only when it holds none of the *private* folders: the working folder
(usually the project), the project the package was installed from, the store and theorembench's
home, and the caller's home folder. A prefix that would show one of them (a Python built with
``--prefix=$HOME``, an interpreter at ``~/python``) is narrowed to the interpreter's own files:
the executable, ``pyvenv.cfg``, ``lib/pythonX.Y`` and the ``libpython`` library. A venv inside a
project binds only the venv.

A private folder under a system folder the sandbox shows whole (a project under ``/usr/src``)
is masked with an empty tmpfs. ``hidden_samples`` lists host paths the probe must not find inside
(each private folder and its entries, except those on the way to a bound path), so the claim is
checked from inside, not assumed.
"""

from __future__ import annotations

import glob
import os
import pwd
import sys
from pathlib import Path

from theorembench.common.paths import default_db, home

TOP = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_MAX_SAMPLES, _ENTRIES_EACH = 300, 30
_OWN_MOUNTS = ("/tmp", "/proc", "/dev", "/etc", "/sandbox")


def _is_under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _project_root() -> str | None:
    """The source tree theorembench runs from (an editable install), None for an installed package."""
    pkg = Path(__file__).resolve().parents[1]
    if {"site-packages", "dist-packages"} & set(pkg.parts):
        return None
    return str(pkg.parent.parent if pkg.parent.name == "src" else pkg.parent)


def private_folders() -> list[str]:
    """Folders no sandboxed program may see: the working folder, the project, the store, theorembench's home,
    the caller's home folder, ``/root`` and ``/home``; as given and with links resolved."""
    found = {os.getcwd(), str(home()), "/root", "/home", os.path.expanduser("~")}
    try:
        found.add(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:
        pass
    db = default_db()
    if "://" not in db:
        found.add(os.path.dirname(os.path.abspath(db)))
    project = _project_root()
    if project:
        found.add(project)
    found |= {os.path.realpath(p) for p in found}
    return sorted(p for p in found if p.startswith("/") and p != "/")


def system_folders() -> list[str]:
    """Folders the layout binds whole: /usr and the top-level library and program folders that are not links."""
    return ["/usr", *(f"/{t}" for t in TOP if os.path.isdir(f"/{t}") and not os.path.islink(f"/{t}"))]


def _in_system(path: str) -> bool:
    return any(_is_under(path, s) for s in system_folders())


def masked_folders() -> list[str]:
    """Private folders inside a system folder: covered with an empty tmpfs inside the sandbox."""
    systems = system_folders()
    return sorted(p for p in private_folders() if _in_system(p) and p not in systems and os.path.isdir(p))


def exposes(path: str, private: list[str]) -> bool:
    """Whether binding ``path`` would show a private folder (the path is one of them, or holds one)."""
    candidates = {path, os.path.realpath(path)}
    return any(c == "/" or _is_under(p, c) for c in candidates for p in private)


def _own_files(prefix: str) -> list[str]:
    """The interpreter's own files under a prefix that must not be bound whole."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = [os.path.join(prefix, "pyvenv.cfg"), os.path.join(prefix, "lib", version),
             os.path.join(prefix, "lib64", version)]  # fmt: skip
    found += glob.glob(os.path.join(prefix, "lib", f"lib{version}*.so*"))
    for exe in {sys.executable, os.path.realpath(sys.executable)}:
        if _is_under(exe, prefix):
            found.append(exe)
    return [p for p in found if os.path.lexists(p)]


def interpreter_paths() -> list[str]:
    """Folders (or files) the interpreter needs, bound read-only at their own paths (nothing under /usr)."""
    exe = os.path.realpath(sys.executable)
    prefixes = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix,
                os.path.dirname(os.path.dirname(exe))}  # fmt: skip
    private, masked = private_folders(), masked_folders()
    out: set[str] = set()
    for prefix in prefixes:
        shown = _in_system(prefix) and not any(_is_under(prefix, m) for m in masked)
        if shown or not os.path.isdir(prefix):
            continue
        if not exposes(prefix, private):
            out.add(prefix)
            continue
        out.update(p for p in _own_files(prefix) if not exposes(p, private))
    return sorted(out)


def hidden_samples(bound: list[str]) -> list[str]:
    """Host paths that must not exist inside: each private folder and some of its entries, except those on the
    way to (or inside) a bound path. The folders come first, so a cap never drops one of them."""
    folders: list[str] = []
    entries: list[str] = []
    systems, own = system_folders(), [*_OWN_MOUNTS, *masked_folders()]
    for folder in private_folders():
        if not os.path.isdir(folder) or folder in systems:
            continue
        try:
            names = sorted(os.listdir(folder))[:_ENTRIES_EACH]
        except OSError:
            names = []
        if folder not in own:  # an own /tmp, a mask: an empty folder is there; the host's entries must be absent
            folders.append(folder)
        entries += [os.path.join(folder, n) for n in names]
    out = [p for p in dict.fromkeys(folders + entries)
           if not any(_is_under(b, p) or _is_under(p, b) for b in bound)]  # fmt: skip
    return out[:_MAX_SAMPLES]
