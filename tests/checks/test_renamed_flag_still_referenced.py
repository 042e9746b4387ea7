"""renamed-flag-still-referenced: what a fixture's line annotations cannot say (which flags, which severity)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.model.finding import Severity
from tests.checks.fixtures import FIXTURES, review_case


def test_a_hidden_flag_is_a_note_and_a_config_key_of_a_declared_field_is_not_the_flag(tmp_path: Path) -> None:
    found = [
        f
        for f in review_case(
            FIXTURES / "renamed-flag-still-referenced" / "py-hidden-and-field", tmp_path / "r"
        )
    ]
    named = [(f.severity, f.title.split("`")[1]) for f in found if f.rule == "renamed-flag-still-referenced"]
    # `--disable-chunked-prefill` was `help=argparse.SUPPRESS` in the base: still named by a functional test's
    # config, but not part of the documented command line. `--moe-token-dropping`'s only mention is the key
    # `moe_token_dropping:`, which `TransformerConfig.moe_token_dropping` still declares.
    assert named == [(Severity.P3, "--disable-chunked-prefill")]
