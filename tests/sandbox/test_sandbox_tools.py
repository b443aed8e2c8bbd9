"""A host tool (sage, gap, gp) is offered only when it really runs inside the sandbox, whatever the host finds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from theorembench.common.errors import UserError
from theorembench.methods.improof.agent_tools import build_tools
from theorembench.methods.improof.config import HarnessSettings, default_tools
from theorembench.sandbox import probe, tool_manifest, tool_runs_inside
from theorembench.sandbox.tools import check_tool, host_tool


@pytest.fixture
def full() -> None:
    if not probe().full:
        pytest.skip(f"full isolation not available here: {probe().problems}")


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """sage, gap and gp that work on the host, from a folder outside /usr that is first on the host's PATH."""
    folder = tmp_path / "opt-tools" / "bin"
    folder.mkdir(parents=True)
    for name in ("sage", "gap", "gp"):
        (folder / name).write_text("#!/bin/sh\necho 42\n")
        (folder / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{Path('/usr/bin')}:{Path('/bin')}")
    return folder


def test_a_host_sage_outside_what_the_sandbox_shows_is_not_offered(fake_tools: Path, full: None) -> None:
    assert subprocess.run(["sage", "-c", "print(6*7)"], capture_output=True, text=True).stdout == "42\n"  # on the host
    info = host_tool("sage")
    assert info["path"] == str(fake_tools / "sage") and info["inside"] is False
    assert info["check"].startswith("does not run inside the sandbox (error: the sandbox could not start the program")
    assert not tool_runs_inside("sage") and "sage" not in default_tools()
    with pytest.raises(UserError, match="the sage tool needs a SageMath that runs inside the sandbox"):
        HarnessSettings.from_args(mode="agentic", tools="python,sage", main_tokens=10, sub_tokens=10, epochs=1)
    with pytest.raises(UserError, match="the sage tool: does not run inside the sandbox"):
        build_tools(HarnessSettings(tools=("python", "sage")), search_index=None, model_provider="openai")
    manifest = tool_manifest()
    assert {exe: (t["path"], t["inside"]) for exe, t in manifest["host"].items()} == {
        "sage": (str(fake_tools / "sage"), False), "gap": (str(fake_tools / "gap"), False),
        "gp": (str(fake_tools / "gp"), False)}  # fmt: skip


def test_a_tool_is_judged_by_running_it_inside(full: None) -> None:
    assert check_tool(["sh", "-c", "echo $((6 * 7))"]) == {"inside": True, "check": "ok"}
    assert check_tool(["sh", "-c", "echo 41"])["inside"] is False  # runs, but does not compute
    found = check_tool(["sh", "-c", "ls /opt-tools-that-do-not-exist/sage"])
    assert found["inside"] is False and "No such file or directory" in found["check"]
