"""derivation-overridden: the dead derivation or the later writer is named (lines: test_fixtures)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.model.finding import Finding, Severity
from tests.checks.fixtures import FIXTURES, review_case

RULE = "derivation-overridden"


def _findings(case: str, tmp_path: Path) -> list[Finding]:
    return [f for f in review_case(FIXTURES / RULE / case, tmp_path / "repo") if f.rule == RULE]


def test_a_constant_after_the_callee_that_derived_it(tmp_path: Path) -> None:
    (f,) = _findings("py-derived-then-constant", tmp_path)
    assert f.severity is Severity.P2
    assert f.title.startswith(
        "`config.special_tokens.eos_token_id = 2` now overwrites what `from_huggingface`"
    )
    assert f.evidence == (
        'Derived at models/neox.py:9: `config.special_tokens.eos_token_id = config_json["eos_token_id"]`.',
    )
    (cpp,) = _findings("cpp-derived-then-constant", tmp_path / "cpp")
    assert "`fromJson`" in cpp.title and cpp.evidence[0].startswith("Derived at cpp/AttentionConfig.cc:13")


def test_a_builder_constraint_undone_by_an_env_override(tmp_path: Path) -> None:
    (f,) = _findings("py-env-after-builder", tmp_path)
    assert "when `TP_SPLIT_EMB` is set (config/model_config.py:12)" in f.title


def test_quotes_the_source_and_suggests_in_its_language(tmp_path: Path) -> None:
    # The fixture's other ruleid cases (writes after a switch, a fall-through) are reported too.
    (cpp,) = [
        f for f in _findings("cpp-scopes", tmp_path / "cpp") if f.path == "cpp/Stages.cc" and f.line == 51
    ]
    assert cpp.title.startswith('`result->stage_status = grpc::Status(0, "ok")` now overwrites')
    assert cpp.evidence == ("Derived at cpp/Stages.cc:48: `result->stage_status = runStage(result)`.",)
    assert "is None" not in cpp.suggestion and "if (!" in cpp.suggestion
    py = _findings("py-scopes", tmp_path / "py")[0]
    assert py.title.startswith('`result.stage_status = "ok"` now overwrites')
    assert "`if ... is None:`" in py.suggestion
