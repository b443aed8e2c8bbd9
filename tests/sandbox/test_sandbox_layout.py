"""Full isolation wherever the interpreter lives (a venv under /tmp, a symlinked venv, a prefix holding a home
folder), and nothing private of the host visible inside: the project, the store, the home folder."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers.cli import cli_env
from helpers.paths import REPO

import theorembench
from theorembench.sandbox import FULL, binds, probe, run_sandboxed

CHECKOUT = REPO
# run inside: which of argv[1]'s paths exist, the interpreter's prefix, and what argv[2]'s folders hold
INSIDE = """import json, os, sys
print(json.dumps({"visible": [p for p in json.loads(sys.argv[1]) if os.path.lexists(p)], "prefix": sys.prefix,
                  "listing": {p: sorted(os.listdir(p)) for p in json.loads(sys.argv[2]) if os.path.isdir(p)}}))"""


@pytest.fixture
def full() -> None:
    if not probe().full:
        pytest.skip(f"full isolation not available here: {probe().problems}")


def make_venv(folder: Path) -> Path:
    """A venv (no pip) that imports this checkout's theorembench and its dependencies through a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    site = next((folder / "lib").glob("python3.*/site-packages"))
    here = [str(Path(theorembench.__file__).resolve().parents[1]), sysconfig.get_paths()["purelib"]]
    (site / "host_packages.pth").write_text("import site; " + "; ".join(f"site.addsitedir({p!r})" for p in here) + "\n")
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project under /tmp with its venv, its store and a file of its own; a home folder with a secret."""
    root = tmp_path / "project"
    (root / ".theorembench").mkdir(parents=True)
    (root / ".theorembench" / "theorembench.db").write_bytes(b"SQLite format 3\x00 the store")
    (root / "secret.txt").write_text("the project's own file")
    (tmp_path / "home-of-user").mkdir()
    (tmp_path / "home-of-user" / ".secret").write_text("the user's file")
    make_venv(root / ".venv")
    return root


def _cli(python: Path, project: Path, *args: str) -> subprocess.CompletedProcess:
    env = cli_env(THEOREMBENCH_HOME=str(project / ".theorembench"), HOME=str(project.parent / "home-of-user"))
    return subprocess.run([str(python), "-m", "theorembench.cli", *args], env=env, cwd=project, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def _host_home_entries() -> list[str]:
    """Entries of the real home folder of this user that are not on the way to the interpreter."""
    real = Path(pwd.getpwuid(os.geteuid()).pw_dir).resolve()
    entries = [real / name for name in sorted(os.listdir(real))] if real.is_dir() else []
    keep = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    return [str(e) for e in entries if not any(k == str(e) or k.startswith(f"{e}/") for k in keep)]


def test_a_venv_under_tmp_inside_a_project_gets_full_isolation_and_sees_nothing_private(project: Path,
                                                                                        full: None) -> None:  # fmt: skip
    python = project / ".venv" / "bin" / "python"
    check = _cli(python, project, "sandbox", "check", "--json", "--no-tools")
    assert check.returncode == 0, check.stdout + check.stderr
    report = json.loads(check.stdout)
    assert report["full"] and report["missing"] == [] and report["problems"] == [], report
    private = [str(project / "secret.txt"), str(project / ".theorembench"), str(project / ".theorembench" /
               "theorembench.db"), str(project.parent / "home-of-user"), str(CHECKOUT / "pyproject.toml"),
               str(CHECKOUT / "src"), str(CHECKOUT / "tests"), *_host_home_entries()]  # fmt: skip
    run = _cli(python, project, "sandbox", "run", "--", "python", "-c", INSIDE, json.dumps(private),
               json.dumps([str(project)]))  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    assert result["status"] == "ok" and set(FULL) <= set(result["isolation"]), result
    inside = json.loads(result["stdout"])
    assert inside["visible"] == []
    assert inside["prefix"] == str(project / ".venv")  # the venv's own interpreter ran
    assert inside["listing"] == {str(project): [".venv"]}  # of the project, only its venv


def test_a_symlinked_venv_gets_full_isolation(project: Path, full: None) -> None:
    link = project.parent / "venv-link"
    link.symlink_to(project / ".venv")
    check = _cli(link / "bin" / "python", project, "sandbox", "check", "--json", "--no-tools")
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["full"]
    run = _cli(link / "bin" / "python", project, "sandbox", "run", "--", "python", "-c", "print(6 * 7)")
    assert run.returncode == 0 and json.loads(run.stdout)["stdout"] == "42\n", run.stdout + run.stderr


def test_a_prefix_holding_a_home_folder_is_narrowed_to_the_interpreter_files(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    alice = tmp_path / "home" / "alice"  # a Python built with --prefix=$HOME
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for part in ("bin", f"lib/{version}/site-packages", "projects/thesis"):
        (alice / part).mkdir(parents=True)
    (alice / "bin" / "python3").write_text("")
    (alice / "lib" / f"lib{version}.so.1.0").write_text("")
    (alice / "secret.txt").write_text("")
    monkeypatch.setenv("HOME", str(alice))
    monkeypatch.setattr(sys, "prefix", str(alice))
    monkeypatch.setattr(sys, "base_prefix", str(alice))
    monkeypatch.setattr(sys, "executable", str(alice / "bin" / "python3"))
    assert binds.interpreter_paths() == [str(alice / "bin" / "python3"), str(alice / "lib" / f"lib{version}.so.1.0"),
                                         str(alice / "lib" / version)]  # fmt: skip
    samples = binds.hidden_samples(binds.interpreter_paths())
    assert str(alice / "secret.txt") in samples and str(alice / "projects") in samples
    assert not any(s.startswith(str(alice / "lib")) for s in samples)


def test_a_project_under_a_system_folder_is_masked(monkeypatch: pytest.MonkeyPatch, full: None) -> None:
    monkeypatch.chdir("/usr/share")  # the working folder is private, and /usr is shown whole
    assert binds.masked_folders() == ["/usr/share"]
    evidence = probe.__wrapped__()  # probed again, uncached, from here
    assert evidence.full, evidence.problems
    res = run_sandboxed(["python", "-c", "import os; print(len(os.listdir('/usr/share')), os.path.isdir('/usr/bin'))"])
    assert res.ok and res.stdout.split() == ["0", "True"], res.stderr
