"""The sandbox: legitimate computations, results, the commands, the refusal below full isolation, the fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from theorembench.cli.app import app
from theorembench.common.errors import UserError
from theorembench.sandbox import FULL, Probe, SandboxError, accepting_weak_isolation, policy, probe, run_sandboxed
from theorembench.sandbox.seccomp import filter_program


@pytest.fixture
def full() -> Probe:
    pr = probe()
    if not pr.full:
        pytest.skip(f"full isolation not available here: {pr.problems}")
    return pr


def test_sympy_computation_works_inside(full: Probe) -> None:
    res = run_sandboxed(script="import sympy as sp\nx = sp.symbols('x')\n"
                               "print(sp.integrate(sp.sin(x)**2, (x, 0, sp.pi)), sp.factorint(2**64 + 1))")  # fmt: skip
    assert res.ok, res.stderr
    assert res.stdout.split("\n")[0] == "pi/2 {274177: 1, 67280421310721: 1}"
    assert res.isolation == list(full.layers) and set(FULL) <= set(res.isolation)


def test_numpy_eigenvalues_of_a_720_matrix_work_inside(full: Probe) -> None:
    res = run_sandboxed(script="import numpy as np\nrng = np.random.default_rng(0)\nm = rng.standard_normal((720, 720))\n"
                               "w = np.linalg.eigvalsh(m + m.T)\nprint(len(w), bool(np.all(np.diff(w) >= 0)))",
                        timeout_s=120, memory_mb=2048)  # fmt: skip
    assert res.ok, res.stderr
    assert res.stdout.split() == ["720", "True"] and res.peak_memory_mb > 20 and res.cpu_s > 0


def test_mpmath_and_networkx_import_inside(full: Probe) -> None:
    res = run_sandboxed(["python", "-c", "import mpmath, networkx as nx; mpmath.mp.dps = 30; "
                         "print(mpmath.zeta(3), nx.number_of_nodes(nx.petersen_graph()))"])  # fmt: skip
    assert res.ok and res.stdout.split() == ["1.20205690315959428539973816151", "10"]


def test_files_go_into_the_work_folder_and_stdin_arrives(tmp_path: Path, full: Probe) -> None:
    work = tmp_path / "w"
    res = run_sandboxed(["python", "-c", "import sys; print(open('data/in.txt').read(), sys.stdin.read())"],
                        files={"data/in.txt": "hello"}, stdin=b"world", work_dir=work)  # fmt: skip
    assert res.stdout.split() == ["hello", "world"] and (work / "data" / "in.txt").read_text() == "hello"
    with pytest.raises(SandboxError):
        run_sandboxed(["true"], files={"../x": "no"})
    with pytest.raises(SandboxError):
        run_sandboxed(["true"], script="print(1)")


def test_working_folders_stay_under_the_work_folder(tmp_path: Path, full: Probe) -> None:
    work = tmp_path / "work"
    (tmp_path / "work-sibling").mkdir()
    work.mkdir()
    (work / "out").symlink_to(tmp_path / "work-sibling")
    assert run_sandboxed(["pwd"], work_dir=work, cwd="/sandbox/a/b").stdout == "/sandbox/a/b\n"
    for cwd, message in (("../x", "must not contain '..'"), ("/etc", "outside the sandbox's work folder"),
                         ("out", "leaves the work folder")):  # fmt: skip
        with pytest.raises(SandboxError, match=message):
            run_sandboxed(["pwd"], work_dir=work, cwd=cwd)


def test_exit_codes_and_signals_are_reported(full: Probe) -> None:
    res = run_sandboxed(["python", "-c", "import sys; sys.exit(3)"])
    assert (res.status, res.exit_code, res.signal) == ("error", 3, None)
    res = run_sandboxed(["python", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    assert (res.status, res.exit_code, res.signal) == ("killed", None, 11)
    res = run_sandboxed(["no-such-program"])
    assert res.status == "error" and "cannot run" in res.stderr


WEAK = Probe("fallback", ["rlimits", "clean-env"], True, None, ["bubblewrap (bwrap) is not installed"])


def test_below_full_isolation_a_run_is_refused_unless_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "probe", lambda: WEAK)
    with pytest.raises(SandboxError) as refused:
        run_sandboxed(["true"])
    message = str(refused.value)
    assert "\n" not in message and message.startswith("refusing to run sandboxed code below full isolation")
    for part in ("missing userns", "bubblewrap (bwrap) is not installed", "--accept-weak-isolation",
                 "THEOREMBENCH_ACCEPT_WEAK_ISOLATION=1", "theorembench sandbox check"):  # fmt: skip
        assert part in message
    with accepting_weak_isolation(True):
        assert run_sandboxed(["true"]).ok
        with pytest.raises(SandboxError, match="strict"):  # the argument False (--strict) wins over the scope
            run_sandboxed(["true"], accept_weak_isolation=False)
    with pytest.raises(SandboxError):  # the scope ended with its block
        run_sandboxed(["true"])
    monkeypatch.setenv("THEOREMBENCH_ACCEPT_WEAK_ISOLATION", "1")
    assert run_sandboxed(["true"]).isolation == ["rlimits", "clean-env"]


def test_acceptance_from_the_settings_file_and_the_variable_wins(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(policy, "probe", lambda: WEAK)
    monkeypatch.setattr(policy, "_warned", True)
    settings = tmp_path / "home" / "sandbox.toml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("[sandbox]\naccept_weak_isolation = true\n")
    assert run_sandboxed(["true"]).ok
    with pytest.raises(SandboxError, match="below full isolation"):  # the option (--strict) wins over the file
        run_sandboxed(["true"], accept_weak_isolation=False)
    monkeypatch.setenv("THEOREMBENCH_ACCEPT_WEAK_ISOLATION", "0")  # and the variable too
    with pytest.raises(SandboxError, match="below full isolation"):
        run_sandboxed(["true"])
    monkeypatch.setenv("THEOREMBENCH_ACCEPT_WEAK_ISOLATION", "maybe")
    with pytest.raises(UserError, match="THEOREMBENCH_ACCEPT_WEAK_ISOLATION='maybe': use 1 or 0"):
        run_sandboxed(["true"])
    monkeypatch.delenv("THEOREMBENCH_ACCEPT_WEAK_ISOLATION")
    settings.write_text("[sandbox]\nstrict = false\n")  # the old key is gone: refusing is the default now
    with pytest.raises(UserError, match="sandbox.strict: Extra inputs"):
        run_sandboxed(["true"])


def test_fallback_still_limits_cleans_and_warns(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    layers = ["rlimits", "clean-env", "new-session", "no-new-privs"] + (["seccomp"] if filter_program() else [])
    monkeypatch.setattr(policy, "probe", lambda: Probe("fallback", layers, True, None, ["no bwrap"]))
    monkeypatch.setattr(policy, "_warned", False)
    monkeypatch.setenv("TB_CANARY", "secret-value")
    res = run_sandboxed(script="import os, resource\nprint(os.environ.get('TB_CANARY'), "
                               "resource.getrlimit(resource.RLIMIT_NOFILE)[0])", accept_weak_isolation=True)  # fmt: skip
    assert res.ok and res.stdout.split() == ["None", "256"] and res.isolation == layers
    assert "WARNING: theorembench sandbox below full isolation (accepted)" in capsys.readouterr().err
    res = run_sandboxed(script="while True: pass", timeout_s=5, cpu_s=1, accept_weak_isolation=True)
    assert res.status == "timeout"


def test_cli_runs_a_script_with_arguments(tmp_path: Path, full: Probe) -> None:
    script = tmp_path / "hello.py"
    script.write_text("import os, sys\nprint(sys.argv[1:], os.getcwd())\n")
    result = CliRunner().invoke(app, ["sandbox", "run", "--timeout", "20", str(script), "a", "--b"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "ok" and data["stdout"] == "['a', '--b'] /sandbox\n" and "seccomp" in data["isolation"]
    assert {"exit_code", "stdout_truncated", "stderr_truncated", "wall_s", "cpu_s", "peak_memory_mb"} <= set(data)


def test_cli_runs_a_command_and_fails_on_timeout(full: Probe) -> None:
    from theorembench.sandbox.binds import interpreter_paths

    result = CliRunner().invoke(app, ["sandbox", "run", "--", "sh", "-c", "echo $HOME; ls -A /root 2>/dev/null; true"])
    assert result.exit_code == 0, result.output
    home, *root = json.loads(result.stdout)["stdout"].split()
    # /root shows at most the way to an interpreter living there (pyenv), never the host's own entries
    ways = {Path(p).parts[2] for p in interpreter_paths() if Path(p).parts[1:2] == ("root",) and len(Path(p).parts) > 2}
    assert home == "/tmp" and set(root) <= ways
    result = CliRunner().invoke(app, ["sandbox", "run", "--timeout", "1", "--", "sleep", "30"])
    assert result.exit_code == 1 and json.loads(result.stdout)["status"] == "timeout"


def test_cli_check_lists_layers_and_tools(full: Probe) -> None:
    result = CliRunner().invoke(app, ["sandbox", "check", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["full"] and data["missing"] == [] and set(FULL) <= set(data["layers"])
    assert all(data["tools"]["python"][name] for name in ("sympy", "numpy", "mpmath", "networkx"))
    assert set(data["tools"]["host"]) == {"sage", "gap", "gp"}
    assert all(set(tool) >= {"path", "inside", "check"} for tool in data["tools"]["host"].values())
    assert data["accept_weak_isolation"] is False and data["settings"].endswith("sandbox.toml")
