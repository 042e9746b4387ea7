"""derivation-drift: both places and both values on the fixture cases (lines are held by test_fixtures)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.model.finding import Finding, Severity
from tests.checks.fixtures import FIXTURES, review_case

RULE = "derivation-drift"


def _findings(case: str, tmp_path: Path) -> list[Finding]:
    return [f for f in review_case(FIXTURES / RULE / case, tmp_path / "repo") if f.rule == RULE]


def test_an_env_switch_parsed_two_ways_names_a_value_they_disagree_on(tmp_path: Path) -> None:
    (f,) = _findings("py-env-parse", tmp_path)
    assert f.severity is Severity.P2
    assert f.title.startswith(
        '`REUSE_CACHE` is parsed as `os.environ.get("REUSE_CACHE", None) == "1"` here but as '
        '`bool(int(os.environ.get("REUSE_CACHE", 0)))` at config/params.py:6'
    )  # quoted as the source writes them, not as the canonical parse `·=="1"`
    assert "`REUSE_CACHE=true` gives False here and raises there" in f.title
    assert f.evidence[1] == 'There: `bool(int(os.environ.get("REUSE_CACHE", 0)))` at config/params.py:6.'


def test_a_default_that_stops_agreeing_with_its_copy(tmp_path: Path) -> None:
    (f,) = _findings("py-field-defaults", tmp_path)
    assert f.title.startswith(
        "`CacheConfig.enable_prefix_caching` now defaults to `True` while its copy "
        "`EngineArgs.enable_prefix_caching` defaults to `None`"
    )
    assert f.evidence[-1] == "Before the change both were `None`."
    (cpp,) = _findings("cpp-bound-default", tmp_path / "cpp")
    assert cpp.path == "cpp/ModelParams.h" and "`ModelConfig.use_fused_qkv`" in cpp.title


def test_an_added_option_is_told_to_follow_the_config_field(tmp_path: Path) -> None:
    # The option is the new copy: the suggestion defaults it to the field, not the field to the option.
    [f] = _findings("py-option-vs-config", tmp_path)
    assert (f.path, f.line) == ("training/arguments.py", 11)
    assert "default the option `mscale` to `0.707`" in f.suggestion
    assert "`MLATransformerConfig.mscale` it is copied into" in f.suggestion
    assert f.localized("zh").suggestion != f.suggestion
