"""Make constraints.txt install on every Python that pyproject.toml admits, not only the one that froze it.

``pip freeze`` records what one interpreter installed. A release can demand a newer patch of
Python than the project's lowest (soupsieve 3.0.2 and later need 3.11.5, Debian 12 ships
3.11.2), and then pip on the older Python stops with a ResolutionImpossible that names a
different package. This script reads each pin's ``Requires-Python`` from the index and, for a
pin the lowest supported Python cannot install, keeps it behind a marker and adds the newest
release that Python can install behind the opposite marker::

    soupsieve==2.10 ; python_full_version < "3.11.5"
    soupsieve==4.1.2 ; python_full_version >= "3.11.5"

Usage: ``python scripts/universal_lock.py [constraints.txt] [--check]``. With ``--check`` it
only reports (exit 1 when a pin needs a marker). It asks the index's JSON API (PEP 691), so it
needs the network; the tests do not run it, the CI step that installs with Debian's Python
checks its result.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pip._vendor.packaging.specifiers import InvalidSpecifier, SpecifierSet
from pip._vendor.packaging.version import InvalidVersion, Version

INDEX = "https://pypi.org/simple"
ROOT = Path(__file__).resolve().parents[1]


def lowest_python() -> Version:
    """The lowest Python that ``requires-python`` admits (``>=3.11`` -> 3.11.0)."""
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    match = re.search(r">=\s*([0-9.]+)", spec)
    if not match:
        raise SystemExit(f"universal_lock: requires-python {spec!r} has no lower bound")
    parts = (match.group(1).split(".") + ["0", "0"])[:3]
    return Version(".".join(parts))


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def releases(name: str) -> dict[Version, set[str]]:
    """Every release of ``name`` on the index, with the Requires-Python of its files."""
    req = urllib.request.Request(f"{INDEX}/{_norm(name)}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as response:
        data = json.load(response)
    out: dict[Version, set[str]] = {}
    for file in data["files"]:
        if file.get("yanked"):  # a yanked file is no candidate (soupsieve 3.0.1: broken on Python < 3.11.5)
            continue
        version = _file_version(name, file["filename"])
        if version is not None:
            out.setdefault(version, set()).add(file.get("requires-python") or "")
    return out


def _file_version(name: str, filename: str) -> Version | None:
    stem = re.sub(r"\.(tar\.gz|zip|whl|tar\.bz2)$", "", filename)
    prefix = re.sub(r"[-_.]+", "_", name).lower() + "-"
    head = re.sub(r"[-_.]+", "_", stem.split("-", 1)[0]).lower() + "-"
    if head != prefix or "-" not in stem:
        return None
    try:
        return Version(stem.split("-")[1])
    except InvalidVersion:
        return None


def admits(requires: set[str], python: Version) -> bool:
    """Whether every file of a release admits ``python`` (an empty Requires-Python admits all)."""
    for text in requires:
        try:
            if text and not SpecifierSet(text).contains(python):
                return False
        except InvalidSpecifier:
            return False
    return True


def _bound(requires: set[str]) -> str:
    """The lowest version a Requires-Python such as '>=3.11.5' names (for the marker)."""
    found = [m for text in requires for m in re.findall(r">=\s*([0-9.]+)", text)]
    return max(found, key=Version) if found else ""


def fix(line: str, python: Version) -> tuple[list[str], str | None]:
    """The lines for one pin, and a note when it needed a marker."""
    name, version = line.split(";")[0].strip().split("==")
    rel = releases(name)
    pinned = Version(version)
    if admits(rel.get(pinned, set()), python):
        return [line], None
    older = sorted((v for v in rel if v < pinned and not v.is_prerelease and admits(rel[v], python)), reverse=True)
    bound = _bound(rel[pinned])
    if not older or not bound:
        raise SystemExit(f"universal_lock: no release of {name} installs on Python {python}; narrow requires-python")
    marker = f'python_full_version >= "{bound}"'
    low = f'python_full_version < "{bound}"'
    note = f"{name}=={version} needs Python {' '.join(sorted(rel[pinned]))}; Python {python} gets {name}=={older[0]}"
    return [f"{name}=={older[0]} ; {low}", f"{name}=={version} ; {marker}"], note


def main(argv: list[str]) -> int:
    check = "--check" in argv
    path = Path(next((a for a in argv if not a.startswith("--")), ROOT / "constraints.txt"))
    python = lowest_python()
    lines = path.read_text().splitlines()
    marked = {x.split("==")[0] for x in lines if ";" in x and not x.startswith("#")}
    pins = [x for x in lines if x.strip() and not x.startswith("#") and x.split("==")[0] not in marked]
    with ThreadPoolExecutor(16) as pool:
        fixed = dict(zip(pins, pool.map(lambda x: fix(x, python), pins), strict=True))
    notes = [note for _, note in fixed.values() if note]
    for note in notes:
        print(f"universal_lock: {note}")
    if check:
        return 1 if notes else 0
    body = [y for x in lines for y in (fixed[x][0] if x in fixed else [x])]  # the pins' order is kept
    path.write_text("\n".join(body) + "\n")
    print(f"universal_lock: {path.name}: installable from Python {python}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
