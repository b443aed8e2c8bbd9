"""The one identity every pipeline is stored under: version, prompts, code and settings."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from theorembench.pipeline.identity import pipeline_name


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def modules(tmp_path):
    (tmp_path / "prompts_a.py").write_text('SYSTEM = "You grade answers."\n')
    (tmp_path / "prompts_b.py").write_text('SYSTEM = "You grade answers."\n# an edited comment\n')
    (tmp_path / "code_a.py").write_text("def f():\n    return 1\n")
    yield load(tmp_path / "prompts_a.py", "tb_prompts_a"), load(tmp_path / "prompts_b.py", "tb_prompts_b"), \
        load(tmp_path / "code_a.py", "tb_code_a")  # fmt: skip
    for name in ("tb_prompts_a", "tb_prompts_b", "tb_code_a"):
        sys.modules.pop(name, None)


def test_every_part_of_the_identity_changes_the_name_and_nothing_else_does(modules, monkeypatch):
    prompts_a, prompts_b, code = modules
    base = {"version": "1", "prompts": [prompts_a], "code": [code], "settings": {"temperature": 0.0}}
    name = pipeline_name("m", scope="2026-11", **base)
    assert name.startswith("m/2026-11/") and name == pipeline_name("m", scope="2026-11", **base)
    changed = [
        {**base, "version": "2"},
        {**base, "settings": {"temperature": 0.5}},
        {**base, "prompts": [prompts_b]},  # the same constants, another source file
        {**base, "code": []},
        {**base, "prompts": [prompts_a, "an inline prompt text"]},
    ]
    names = {pipeline_name("m", scope="2026-11", **parts) for parts in changed}
    assert len(names) == len(changed) and name not in names
    # a prompt constant changed at run time counts as an edit
    monkeypatch.setattr(prompts_a, "SYSTEM", "You grade answers strictly.")
    assert pipeline_name("m", scope="2026-11", **base) != name
    monkeypatch.undo()
    assert pipeline_name("m", scope="2026-11", **base) == name


def test_code_modules_count_by_their_source_only(modules):
    prompts_a, _b, code = modules
    base = {"version": "1", "prompts": [prompts_a], "settings": {}}
    name = pipeline_name("m", code=[code], **base)
    code.CACHE = ["grows while running"]  # state a code module gathers at run time is not part of the identity
    assert pipeline_name("m", code=[code], **base) == name


def test_a_code_file_given_by_path_counts_by_its_bytes(tmp_path):
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text("X = 1\n")
    two.write_text("X = 2\n")
    base = {"version": "1", "prompts": [], "settings": {}}
    assert pipeline_name("m", code=[one], **base) != pipeline_name("m", code=[two], **base)
    assert pipeline_name("m", code=[one], **base) == pipeline_name("m", code=[one], **base)
