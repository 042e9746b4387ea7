from __future__ import annotations

import pytest

from reviewbot.config import parse_repo_config
from reviewbot.errors import UsageError


def test_repo_config_sections() -> None:
    cfg = parse_repo_config(
        '[review]\nchecklists = ["general", "x.yaml"]\ndisabled = ["formatting-noise"]\n'
        '[tests]\ncommand = "make test"\n'
    )
    assert cfg.checklists == ("general", "x.yaml")
    assert cfg.disabled == frozenset({"formatting-noise"})
    assert cfg.tests == {"command": "make test"}


def test_repo_config_errors_name_the_problem() -> None:
    with pytest.raises(UsageError, match="not valid TOML"):
        parse_repo_config("[review")
    with pytest.raises(UsageError, match="review.disabled"):
        parse_repo_config("[review]\ndisabled = 3\n")
