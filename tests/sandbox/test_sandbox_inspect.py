"""Inspect's own python() and bash() tools, run in the ``theorembench`` sandbox environment."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from theorembench.sandbox import Probe, SandboxError, policy, probe

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.solver import generate, solver, use_tools  # noqa: E402
from inspect_ai.tool import bash, python  # noqa: E402

from theorembench.sandbox.inspect_env import InspectSandboxConfig, TheorembenchSandbox  # noqa: E402
from theorembench.testing.fakellm import FakeLLMServer  # noqa: E402


@solver
def use_the_tools():
    """Calls the tools directly, the way an agent's tool calls reach them, and keeps what they return."""

    async def solve(state, generate):
        py, sh = python(timeout=60), bash(timeout=60)
        me = state.sample_id
        state.store.set("before", await sh(command="ls -A"))
        state.store.set("write", await py(code=f"open('mine-{me}.txt', 'w').write('kept {me}')\nprint(6 * 7)"))
        state.store.set("read", await py(code=f"print(open('mine-{me}.txt').read())"))
        state.store.set("shell", await sh(command="ls; echo \"key=[$OPENAI_API_KEY]\"; id -u; pwd"))
        state.store.set("net", await py(code="import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), 2)\n"
                                             "    print('connected')\nexcept OSError as e:\n    print('no network:', e)"))
        try:
            await python(timeout=2)(code="while True:\n    pass")
            state.store.set("spin", "returned")
        except TimeoutError as exc:
            state.store.set("spin", f"TimeoutError: {exc}")
        return state

    return solve


def _run(tmp_path: Path, config: InspectSandboxConfig):
    task = Task(dataset=[Sample(input="first", id="a"), Sample(input="second", id="b")], solver=use_the_tools(),
                sandbox=("theorembench", config))  # fmt: skip
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none", max_samples=1)
    assert log.status == "success", log.error
    return {s.id: s for s in log.samples}


def test_inspect_python_and_bash_tools_run_isolated_and_files_stay_within_one_sample(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-must-not-leak")
    samples = _run(tmp_path, InspectSandboxConfig(timeout_s=60, memory_mb=1024))
    for me, other in (("a", "b"), ("b", "a")):
        store = samples[me].store
        assert store["before"].strip() == ""  # a fresh work folder: nothing from the other sample
        assert store["write"].strip() == "42"
        assert store["read"].strip() == f"kept {me}"  # files persist between the calls of one sample
        shell = store["shell"]
        assert f"mine-{me}.txt" in shell and f"mine-{other}.txt" not in shell
        assert "key=[]" in shell and "sk-canary" not in shell
        assert "\n/sandbox" in shell
        assert "no network" in store["net"]
        assert store["spin"].startswith("TimeoutError") and "not retried" in store["spin"]
        infos = [e.data["theorembench_sandbox"] for e in samples[me].events
                 if e.event == "info" and isinstance(e.data, dict) and "theorembench_sandbox" in e.data]  # fmt: skip
        assert len(infos) == 6  # one record per exec: the spin ran once, it was not retried
        assert [r["status"] for r in infos].count("timeout") == 1
        assert all(r["isolation"] == probe().layers for r in infos)


def test_the_spinning_call_is_stopped_at_the_tool_timeout_not_the_default(tmp_path: Path):
    samples = _run(tmp_path, InspectSandboxConfig(timeout_s=600))
    infos = [e.data["theorembench_sandbox"] for e in samples["a"].events
             if e.event == "info" and isinstance(e.data, dict) and "theorembench_sandbox" in e.data]  # fmt: skip
    spin = [r for r in infos if r["status"] == "timeout"]
    assert len(spin) == 1 and spin[0]["reason"].endswith("time limit (2 s)")


def test_host_file_access_stays_inside_the_work_folder(tmp_path: Path):
    asyncio.run(_host_file_access(tmp_path))


async def _host_file_access(tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    [env] = (await TheorembenchSandbox.sample_init("t", None, {})).values()
    try:
        await env.write_file("sub/a.txt", "hello")
        assert await env.read_file("/sandbox/sub/a.txt") == "hello"
        res = await env.exec(["bash", "-c", f"ln -s {secret} link.txt; ln -s {tmp_path} dir; cat sub/a.txt"])
        assert res.success and res.stdout == "hello"
        with pytest.raises(PermissionError):
            await env.read_file("link.txt")
        with pytest.raises(PermissionError):
            await env.read_file("dir/secret.txt")
        with pytest.raises(PermissionError):
            await env.write_file("dir/planted.txt", "x")
        with pytest.raises(PermissionError):
            await env.read_file(str(secret))
        with pytest.raises(PermissionError):
            await env.read_file("../secret.txt")
        assert not (tmp_path / "planted.txt").exists()
        await env.write_file("link.txt", "replaced")  # a link is replaced by a plain file, the target untouched
        assert secret.read_text() == "host secret"
        work = env.work
    finally:
        await TheorembenchSandbox.sample_cleanup("t", None, {"default": env}, False)
    assert not work.exists()


def test_a_model_calls_inspects_python_tool_through_the_fake_server_and_it_runs_in_the_sandbox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    monkeypatch.setenv("FAKE_API_KEY", "test-key")
    code = "import sympy\nprint(sympy.factorint(2**32 + 1))"
    script = {"rules": [{"match": "641", "reply": "Euler was right: 641 divides F5."}],
              "default": {"reply": {"tool_calls": [{"name": "python", "arguments": {"code": code}}]}}}  # fmt: skip
    with FakeLLMServer(script) as server:
        task = Task(dataset=[Sample(input="Factor 2^32 + 1.")], solver=[use_tools(python(timeout=60)), generate()],
                    sandbox="theorembench", message_limit=6)  # fmt: skip
        [log] = eval(task, model="openai-api/fake/m", model_base_url=server.base_url, log_dir=str(tmp_path / "logs"),
                     display="none")  # fmt: skip
        assert len(server.requests) == 2
    assert log.status == "success", log.error
    [sample] = log.samples
    tool_msgs = [m for m in sample.messages if m.role == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0].text.strip() == "{641: 1, 6700417: 1}"
    assert sample.output.completion == "Euler was right: 641 divides F5."
    infos = [e.data["theorembench_sandbox"] for e in sample.events
             if e.event == "info" and isinstance(e.data, dict) and "theorembench_sandbox" in e.data]  # fmt: skip
    assert [r["status"] for r in infos] == ["ok"] and infos[0]["isolation"] == probe().layers


def test_an_inspect_task_is_refused_before_any_model_call_below_full_isolation(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    monkeypatch.setattr(policy, "probe", lambda: Probe("fallback", ["rlimits", "clean-env", "new-session"], True, None,
                                                       ["no bwrap here"]))  # fmt: skip
    monkeypatch.setattr(policy, "_warned", True)
    monkeypatch.setenv("FAKE_API_KEY", "test-key")
    script = {"default": {"reply": {"tool_calls": [{"name": "python", "arguments": {"code": "print(6 * 7)"}}]}},
              "rules": [{"match": "42", "reply": "done"}]}  # fmt: skip

    def once(config: InspectSandboxConfig | None, calls: list[int]) -> object:
        with FakeLLMServer(script) as server:
            task = Task(dataset=[Sample(input="Compute.")], solver=[use_tools(python(timeout=60)), generate()],
                        sandbox=("theorembench", config) if config else "theorembench", message_limit=6)  # fmt: skip
            try:
                [log] = eval(task, model="openai-api/fake/m", model_base_url=server.base_url,
                             log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
            finally:
                calls.append(len(server.requests))
            return log

    calls: list[int] = []
    with pytest.raises(SandboxError, match="refusing to run the tools of an Inspect task .* --accept-weak-isolation"):
        once(None, calls)
    assert calls == [0]
    log = once(InspectSandboxConfig(accept_weak_isolation=True), calls)
    calls = calls[1:]
    assert log.status == "success" and calls == [2], log.error
    [sample] = log.samples
    infos = [e.data["theorembench_sandbox"] for e in sample.events
             if e.event == "info" and isinstance(e.data, dict) and "theorembench_sandbox" in e.data]  # fmt: skip
    assert [(r["status"], r["isolation"]) for r in infos] == [("ok", ["rlimits", "clean-env", "new-session"])]
