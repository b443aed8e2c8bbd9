"""Services name a bad setting in their own words; the command line shows the option that sets it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from theorembench.cli.app import app
from theorembench.common.errors import InvalidSetting
from theorembench.methods.eternal.instantiate import instantiate_templates


def test_a_service_names_the_setting_and_the_command_line_names_the_option(tmp_path, lmb_hard):
    with pytest.raises(InvalidSetting) as caught:
        instantiate_templates([], 1, 0, memory_mb=16)
    assert caught.value.setting == "memory_mb" and str(caught.value) == "memory_mb must be at least 64 MB, got 16"
    assert "--" not in str(caught.value)
    res = CliRunner().invoke(app, ["eval", "mcq", str(lmb_hard), "--model", "openai-api/fake/m", "--n", "0",
                                   "--db", str(tmp_path / "s.db")])  # fmt: skip
    assert res.exit_code == 2 and "--n must be positive, got 0" in res.output
    res = CliRunner().invoke(app, ["eval", "mcq", str(lmb_hard), "--model", "openai-api/fake/m", "--system-prompt",
                                   str(tmp_path / "missing.txt"), "--db", str(tmp_path / "s.db")])  # fmt: skip
    assert res.exit_code == 2 and "--system-prompt " in res.output and "cannot read" in res.output


def test_a_setting_named_inside_its_message_reads_in_the_services_words_and_as_the_option() -> None:
    from theorembench.cli.common import option_of
    from theorembench.common.errors import InvalidSetting

    exc = InvalidSetting("latex.check=false", template="cannot run {x}; turn the check off ({setting})")
    assert str(exc) == "cannot run {x}; turn the check off (latex.check = false)"  # braces of the text stay
    assert exc.naming(option_of(exc.setting)) == ("cannot run {x}; turn the check off "
                                                  "(--no-latex-check, or check = false under [latex])")  # fmt: skip
    assert str(InvalidSetting("n", "must be at least 1")) == "n must be at least 1"
