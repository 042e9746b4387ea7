"""What unconditional-override suggests depends on whose setting the write replaces."""

from __future__ import annotations

from pathlib import Path

from tests.checks.fixtures import FIXTURES, review_case

CASES = FIXTURES / "unconditional-override"


def test_an_overridden_command_line_option_gets_the_options_advice(tmp_path: Path) -> None:
    # `args.sequence_parallel = True` over the user's `--sequence-parallel`: no model builder is involved.
    found = [
        f for f in review_case(CASES / "py-cli-option", tmp_path / "a") if f.rule == "unconditional-override"
    ]
    option = [f for f in found if f.path == "pkg/arguments.py"]
    assert option and all("parser's default" in f.suggestion for f in option)
    assert all("config builder" not in f.suggestion for f in option)


def test_an_overridden_model_setting_gets_the_builder_advice(tmp_path: Path) -> None:
    found = [
        f for f in review_case(CASES / "py-override", tmp_path / "b") if f.rule == "unconditional-override"
    ]
    assert found and all("config builder" in f.suggestion for f in found)
