"""Every build reports its steps the same way: an ``on_step(key, stage, status)`` callback of type OnStep."""

from __future__ import annotations

import inspect

import pytest

from theorembench.common.progress import OnStep
from theorembench.methods.eternal.build import build_eternal
from theorembench.methods.hybrid.service import build_hybrid
from theorembench.methods.lmb.build import build_lmb


@pytest.mark.parametrize("build", [build_lmb, build_hybrid, build_eternal], ids=lambda f: f.__name__)
def test_every_build_takes_one_step_callback(build) -> None:
    params = inspect.signature(build, eval_str=True).parameters
    assert params["on_step"].annotation == OnStep | None
    assert "progress" not in params and "on_stage" not in params
