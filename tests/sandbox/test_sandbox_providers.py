"""``--sandbox theorembench|docker|k8s``: one interface (sandbox/providers.py) selects where code runs.

On this machine the docker daemon is not running and inspect-k8s-sandbox is not installed (it is no
dependency of the project), so both fail here as they would for a user: one line naming what is
missing, before any work or model call. The docker daemon is made unreachable for certain by pointing
the real docker client at a socket that does not exist. The driver of Inspect's providers (a fresh
sample per run, files, standard input, limits) runs for real on the one provider this machine has,
the ``theorembench`` one, and so does the probe that reads a container's layers from inside.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env
from helpers.improof_samples import odd_sums_yaml

from theorembench.common.errors import InvalidSetting
from theorembench.methods.eternal import params as P
from theorembench.methods.eternal.instantiate import instantiate_templates
from theorembench.methods.eternal.render import strip_bindings
from theorembench.methods.eternal.runs import run_role
from theorembench.methods.eternal.template import load_templates
from theorembench.methods.improof.catalog import import_problems
from theorembench.methods.improof.harness import run_improof_eval
from theorembench.sandbox import SandboxError, combine, probe, summary_line
from theorembench.sandbox.containers import PROBE, ContainerSandbox, layers_from, record, refuse
from theorembench.sandbox.inspect_env import InspectSandboxConfig
from theorembench.sandbox.providers import check_kind, inspect_sandbox, open_sandbox, require_sandbox
from theorembench.sandbox.runner import run_sandboxed
from theorembench.store import Store

MODEL = "openai-api/fake/m"
NO_SOCKET = "unix:///nonexistent-theorembench/docker.sock"
K8S_MISSING = "k8s needs the inspect-k8s-sandbox package (pip install inspect-k8s-sandbox)"
# the full set for a container, written out by hand
CONTAINER_FULL = ["container", "no-network", "non-root", "no-capabilities", "no-new-privs", "seccomp", "pids-limit",
                  "memory-limit"]  # fmt: skip
# what the probe prints inside a container of our compose file (network none, user 65534, caps dropped, limits)
DOCKER_EVIDENCE = ("uid=65534\nCapEff=0000000000000000\nNoNewPrivs=1\nSeccomp=2\nnets=lo,\npids=64\n"
                   "memory=1073741824\n")  # fmt: skip
# and inside a typical pod: a network interface, root, docker's default capabilities, no seccomp, no limits
POD_EVIDENCE = "uid=0\nCapEff=00000000a80425fb\nNoNewPrivs=0\nSeccomp=0\nnets=lo,eth0,\npids=max\nmemory=max\n"


def docker_unreachable(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real docker client pointed at a socket that does not exist; what the sandbox setting's error must say
    after its name (``sandbox`` from Python, ``--sandbox`` on the command line)."""
    monkeypatch.setenv("DOCKER_HOST", NO_SOCKET)
    if shutil.which("docker") is None:  # no client at all on this machine: that is what is missing then
        return "docker: the docker command is not installed"
    return "docker: the docker daemon is not reachable: "


def cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "theorembench.cli", *args], env=cli_env(**env), cwd=cwd, check=False,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode != 0, done.stdout + done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    return line


def derangements(tmp_path: Path) -> Path:
    shipped = resources.files("theorembench.data").joinpath("eternal", "derangements.json")
    with resources.as_file(shipped) as path:
        target = tmp_path / "templates.json"
        target.write_bytes(Path(path).read_bytes())
    return target


@pytest.fixture
def improof_store(tmp_path: Path):
    problems = tmp_path / "problems.yaml"
    problems.write_text(odd_sums_yaml(status="active"))
    with Store(tmp_path / "improof.db") as st:
        import_problems(st, problems)
        yield st


def test_the_kinds_and_a_wrong_one(tmp_path: Path) -> None:
    assert [check_kind(k) for k in (None, "theorembench", "Docker", " k8s ")] == ["theorembench", "theorembench",
                                                                                 "docker", "k8s"]  # fmt: skip
    with pytest.raises(InvalidSetting, match="'podman' is not a sandbox; choose one of theorembench, docker, k8s"):
        check_kind("podman")
    done = cli("eternal", "instantiate", str(derangements(tmp_path)), "--sandbox", "podman", "--out",
               str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    assert error_line(done) == ("error: --sandbox 'podman' is not a sandbox; choose one of theorembench, docker, "
                                "k8s")  # fmt: skip
    assert done.returncode == 2 and not (tmp_path / "out").exists()


def test_the_default_runs_through_the_interface_with_the_same_record(tmp_path: Path) -> None:
    assert probe().full  # this machine gives full isolation: the default runs without acceptance
    assert require_sandbox("theorembench", purpose="a test") == {"layers": probe().layers, "full": True,
                                                                  "missing": [], "weak_isolation_accepted": False}
    with open_sandbox() as box:
        res = box.run(["python", "main.py"], files={"main.py": "import sys; print(6 * 7, sys.stdin.read())"},
                      stdin=b"in", timeout_s=60)  # fmt: skip
        assert box.kind == "theorembench" and box.layers == probe().layers
    assert (res.status, res.stdout, res.isolation) == ("ok", "42 in\n", probe().layers)
    name, config = inspect_sandbox(None, timeout_s=60, memory_mb=1024, accept_weak_isolation=None)
    assert name == "theorembench" and config == InspectSandboxConfig(timeout_s=60, memory_mb=1024)


def test_docker_without_a_daemon_fails_in_one_line_before_any_work(tmp_path: Path, fake_env, improof_store,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from helpers.eternal import BASE, GEN, JUDGE, add_papers, rules

    from theorembench.methods.eternal.build import build_eternal

    expected = docker_unreachable(monkeypatch)
    with pytest.raises(SandboxError) as caught:
        require_sandbox("docker", purpose="a test")
    assert isinstance(caught.value, InvalidSetting) and caught.value.setting == "sandbox"
    assert str(caught.value).startswith(f"sandbox {expected}") and "\n" not in str(caught.value)
    if "not reachable" in expected:
        assert "nonexistent-theorembench/docker.sock" in str(caught.value)  # the client's own words, from the socket
        assert str(caught.value).endswith("(start it, or point DOCKER_HOST at one)")  # and what to do
    with pytest.raises(SandboxError, match=expected):
        instantiate_templates(load_templates(derangements(tmp_path)), 2, 0, sandbox="docker")
    fake_env.set_script({"rules": rules()})
    with Store(tmp_path / "e.db") as st:
        ids = add_papers(st, tmp_path, ("ALPHA",))
        with pytest.raises(SandboxError, match=expected):
            build_eternal(st, paper_ids=list(ids.values()), generator=GEN, judge=JUDGE, overrides=BASE,
                          out_dir=tmp_path / "built", sandbox="docker")  # fmt: skip
    with pytest.raises(SandboxError, match=expected):
        run_improof_eval(improof_store, MODEL, tools=("python",), out_dir=tmp_path / "improof", sandbox="docker")
    assert fake_env.requests == [] and not (tmp_path / "built").exists() and not (tmp_path / "improof").exists()
    done = cli("eternal", "instantiate", str(derangements(tmp_path)), "--sandbox", "docker", "--out",
               str(tmp_path / "out"), cwd=tmp_path, DOCKER_HOST=NO_SOCKET)  # fmt: skip
    assert error_line(done).startswith(f"error: --sandbox {expected}") and not (tmp_path / "out").exists()
    # no docker command on the PATH at all: that is the line then
    done = cli("eternal", "instantiate", str(derangements(tmp_path)), "--sandbox", "docker", "--out",
               str(tmp_path / "out"), cwd=tmp_path, PATH="/nonexistent-theorembench-bin")  # fmt: skip
    assert error_line(done) == ("error: --sandbox docker: the docker command is not installed (Docker Engine with "
                                "its compose plugin)")  # fmt: skip


def test_k8s_without_its_package_fails_in_one_line_before_any_model_call(tmp_path: Path, fake_env,
                                                                         improof_store: Store) -> None:  # fmt: skip
    # inspect-k8s-sandbox is not among the project's dependencies (constraints.txt): absent here as for a user
    assert importlib.util.find_spec("k8s_sandbox") is None
    with pytest.raises(SandboxError) as caught:
        require_sandbox("k8s", accept_weak_isolation=True, purpose="a test")
    assert str(caught.value) == f"sandbox {K8S_MISSING}"
    with pytest.raises(SandboxError, match="inspect-k8s-sandbox"):
        run_improof_eval(improof_store, MODEL, tools=("python",), out_dir=tmp_path / "improof", sandbox="k8s")
    done = cli("improof", "eval", "--model", MODEL, "--tools", "python", "--sandbox", "k8s", "--db",
               str(tmp_path / "improof.db"), "--out", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    assert error_line(done) == f"error: --sandbox {K8S_MISSING}"
    assert fake_env.requests == [] and not (tmp_path / "out").exists() and not (tmp_path / "improof").exists()


def test_k8s_names_helm_then_a_cluster_when_its_package_is_there(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # a stand-in k8s_sandbox package makes the package check pass; what comes next is checked for real: the helm
    # command on the PATH, then a kubeconfig (or a pod's service account)
    (tmp_path / "site" / "k8s_sandbox").mkdir(parents=True)
    (tmp_path / "site" / "k8s_sandbox" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(SandboxError) as caught:
        require_sandbox("k8s", accept_weak_isolation=True, purpose="a test")
    assert str(caught.value) == ("sandbox k8s needs the helm command (Helm 3.10 or later, "
                                 "https://helm.sh/docs/intro/install/)")  # fmt: skip
    helm = bin_dir / "helm"
    helm.write_text("#!/bin/sh\necho v3.15.0\n")
    helm.chmod(0o755)
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(SandboxError) as caught:
        require_sandbox("k8s", accept_weak_isolation=True, purpose="a test")
    assert str(caught.value) == ("sandbox k8s needs a cluster: no kubeconfig (set KUBECONFIG or write ~/.kube/config) "
                                 "and not inside a pod")  # fmt: skip


def test_a_container_is_full_only_as_its_evidence_shows_and_is_recorded_as_the_provider_gives_it() -> None:
    layers = layers_from(DOCKER_EVIDENCE)
    assert layers == CONTAINER_FULL
    docker = record("docker", layers, accepted=False)
    assert docker == {"provider": "docker", "level": "container", "layers": CONTAINER_FULL, "full": True,
                      "missing": [], "weak_isolation_accepted": False}  # fmt: skip
    refuse("docker", layers, None, "a test")  # full: nothing to accept
    assert summary_line(docker) == f"full (docker container, 8 layers: {', '.join(CONTAINER_FULL)})"
    assert combine([docker, docker]) == docker
    pod = layers_from(POD_EVIDENCE)
    assert pod == ["container"]
    lacking = "no-network, non-root, no-capabilities, no-new-privs, seccomp, pids-limit, memory-limit"
    with pytest.raises(SandboxError) as caught:
        refuse("k8s", pod, None, "a test")
    assert str(caught.value).startswith(f"refusing to run a test below full isolation (k8s sandbox): the pod lacks "
                                        f"{lacking}; to accept weaker isolation pass --accept-weak-isolation")
    refuse("k8s", pod, True, "a test")  # accepted: runs
    weak = record("k8s", pod, accepted=True)
    assert weak == {"provider": "k8s", "level": "pod", "layers": ["container"], "full": False,
                    "missing": lacking.split(", "), "weak_isolation_accepted": True}  # fmt: skip
    assert summary_line(weak) == (f"WEAK: k8s pod, missing {lacking}; layers container (accepted with "
                                  "--accept-weak-isolation)")  # fmt: skip
    # a container that kept a network interface is not full, whatever else it has
    assert "no-network" not in layers_from(DOCKER_EVIDENCE.replace("nets=lo,", "nets=lo,eth0,"))


def test_the_probe_reads_its_evidence_from_inside_for_real() -> None:
    # inside the theorembench sandbox: loopback only, uid 65534, no capabilities, no-new-privs, seccomp; no cgroup
    # files are shown there, so no process or memory limit is read (the sandbox sets rlimits instead)
    res = run_sandboxed(["sh", "-c", PROBE], timeout_s=60)
    assert res.ok, res.stderr
    assert layers_from(res.stdout) == ["container", "no-network", "non-root", "no-capabilities", "no-new-privs",
                                       "seccomp"]  # fmt: skip


def test_the_docker_compose_file_asks_for_every_layer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    name, path = inspect_sandbox("docker", timeout_s=60, memory_mb=1024, processes=32)
    assert name == "docker" and path.endswith("-compose.yaml")
    assert Path(path).parent == tmp_path / "home" / "sandbox"
    service = json.loads(Path(path).read_text())["services"]["default"]
    assert (service["image"], service["network_mode"], service["user"], service["cap_drop"]) == (
        "python:3.11-slim", "none", "65534:65534", ["ALL"])
    assert (service["security_opt"], service["pids_limit"], service["mem_limit"]) == (
        ["no-new-privileges:true"], 32, "1024m")
    monkeypatch.setenv("THEOREMBENCH_SANDBOX_IMAGE", "example/sage:10")
    _, other = inspect_sandbox("docker", timeout_s=60, memory_mb=1024, processes=32)
    assert other != path and json.loads(Path(other).read_text())["services"]["default"]["image"] == "example/sage:10"
    assert inspect_sandbox("k8s", timeout_s=60, memory_mb=1024) == "k8s"  # no values file: the chart's defaults


@pytest.fixture
def driven():
    """The driver of docker's and k8s's providers, on the Inspect provider this machine runs (theorembench)."""
    box = ContainerSandbox.launch("theorembench", None)
    try:
        box.probe()
        yield box
    finally:
        box.close()


def test_the_provider_driver_runs_each_program_in_a_fresh_sample(driven: ContainerSandbox) -> None:
    assert driven.layers == ["container", "no-network", "non-root", "no-capabilities", "no-new-privs", "seccomp"]
    res = driven.run(["python", "main.py", "arg"], files={"main.py": "import os, sys\nprint(sys.stdin.read(), "
                     "sys.argv[1], os.environ['K'], open('d/a.txt').read())\nopen('left.txt', 'w').write('x')",
                     "d/a.txt": "file"}, stdin=b"in", env={"K": "v"}, timeout_s=60)  # fmt: skip
    assert (res.status, res.stdout, res.isolation) == ("ok", "in arg v file\n", driven.layers)
    again = driven.run(script="import os; print(os.path.exists('left.txt'))", timeout_s=60)
    assert again.stdout == "False\n"  # a fresh sample: nothing of the run before
    assert [driven.run(script=s, timeout_s=t).status for s, t in (
        ("import time; time.sleep(60)", 2), ("import sys; sys.exit(3)", 60))] == ["timeout", "error"]
    big = driven.run(script="print('y' * 5000)", timeout_s=60, max_output_bytes=1000)
    assert (big.status, len(big.stdout), big.stdout_truncated) == ("killed", 1000, True)
    memory = driven.run(script="x = bytearray(900 * 1024 * 1024)", timeout_s=60, memory_mb=256)
    assert (memory.status, memory.reason) == ("memory", "memory limit (256 MB)")


def test_eternal_roles_run_unchanged_through_an_inspect_provider(driven: ContainerSandbox, tmp_path: Path) -> None:
    [t] = load_templates(derangements(tmp_path))
    code = strip_bindings(t.formal_solution, list(t.params))
    runs = [{"id": f"n{n}", "params": {"n": P.wire(t.params["n"], n)}, "mode": "nearest"} for n in (4, 5)]
    out = run_role("formula", code, runs, hash_seed=1, per_run_s=20, timeout_s=120, memory_mb=2048, box=driven)
    # D(4) = 9 and D(5) = 44 derangements, by hand
    assert [(k, r.status, r.value) for k, r in out.runs.items()] == [("n4", "ok", 9), ("n5", "ok", 44)]
    assert out.sandbox.isolation == driven.layers and not out.tampered
