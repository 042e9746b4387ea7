"""The user and group a root worker's tests run as (REVIEWBOT_SANDBOX_UID / _GID): a bad value is one
clear error, never a traceback, and 0 (root) is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviewbot.errors import EnvironmentProblem
from reviewbot.execution import sandbox


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    return monkeypatch


@pytest.mark.parametrize("value", ["abc", "-5", "0", "1.5"])
def test_a_bad_or_root_id_is_one_clear_error(as_root: pytest.MonkeyPatch, tmp_path: Path, value: str) -> None:
    as_root.setenv("REVIEWBOT_SANDBOX_UID", value)
    with pytest.raises(EnvironmentProblem) as caught:
        sandbox.sandbox_argv("unshare", "true", tmp_path, tmp_path)
    assert str(caught.value) == (
        f"REVIEWBOT_SANDBOX_UID={value}: not a user or group id to run tests as; give a number other than 0"
    )


def test_a_named_id_is_the_one_the_test_runs_as(as_root: pytest.MonkeyPatch, tmp_path: Path) -> None:
    as_root.setenv("REVIEWBOT_SANDBOX_UID", "4321")
    as_root.setenv("REVIEWBOT_SANDBOX_GID", " 4322 ")
    argv = " ".join(sandbox.sandbox_argv("unshare", "true", tmp_path, tmp_path))
    assert "4321" in argv and "4322" in argv and "65534" not in argv
    as_root.delenv("REVIEWBOT_SANDBOX_UID")
    as_root.delenv("REVIEWBOT_SANDBOX_GID")
    assert "65534" in " ".join(sandbox.sandbox_argv("unshare", "true", tmp_path, tmp_path))
