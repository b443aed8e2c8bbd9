"""Set-up picks an interpreter theorembench supports, or stops with one line naming what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.paths import REPO

ROOT = REPO
PICK = ROOT / "scripts" / "pick_python.sh"


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def _pick(bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(bin_dir), "HOME": str(bin_dir)}
    return subprocess.run(["/bin/bash", str(PICK), *args], env=env, capture_output=True, text=True, timeout=60)


def test_an_old_python3_is_passed_over_for_a_versioned_one(tmp_path: Path) -> None:
    _fake(tmp_path, "python3", 'case "$*" in *print*) echo "3.9.2 (too old)";; *) exit 1;; esac')
    os.symlink(sys.executable, tmp_path / "python3.12")  # a real interpreter >= 3.11 with venv
    res = _pick(tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "python3.12"


def test_the_python_the_user_names_comes_first(tmp_path: Path) -> None:
    os.symlink(sys.executable, tmp_path / "python3")
    os.symlink(sys.executable, tmp_path / "mypython")
    assert _pick(tmp_path, "mypython").stdout.strip() == "mypython"


def test_no_usable_python_stops_with_one_line_naming_what_to_install(tmp_path: Path) -> None:
    # a Python without venv's ensurepip (Debian's python3 before python3-venv is installed)
    _fake(tmp_path, "python3", 'case "$*" in *ensurepip*) exit 1;; *) echo "3.11.2";; esac')
    res = _pick(tmp_path)
    assert res.returncode == 1 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "Python 3.11 or newer" in lines[0] and "python3-venv" in lines[0] and "(python3: 3.11.2)" in lines[0]


def test_constraints_pin_no_release_that_needs_a_newer_patch_of_python_unmarked() -> None:
    """The lock installs on Debian 12's Python 3.11.2: soupsieve 4.x needs 3.11.5, so it stands behind a marker."""
    lines = [x for x in (ROOT / "constraints.txt").read_text().splitlines() if x.startswith("soupsieve")]
    assert lines == ['soupsieve==2.10 ; python_full_version < "3.11.5"',
                     'soupsieve==4.1.2 ; python_full_version >= "3.11.5"']  # fmt: skip
