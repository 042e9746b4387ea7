"""config-key-removed: the finding's severity, field, evidence and Chinese title (the fixture cases hold
which lines fire)."""

from __future__ import annotations

from pathlib import Path

from tests.checks.fixtures import FIXTURES, review_case


def test_config_key_is_p2_at_the_getters_call(tmp_path: Path) -> None:
    findings = review_case(FIXTURES / "config-key-removed" / "py-config-key", tmp_path / "repo")
    found = {f"{f.path}:{f.line}": f for f in findings if f.rule == "config-key-removed"}
    assert list(found) == ["engine/config.py:17"]
    key = found["engine/config.py:17"]
    assert key.severity.value == "P2"
    assert dict(key.extra)["field"] == "fp32_allreduce"
    assert key.evidence[0] == (
        "Base read engine/config.py:9: "
        "`return get_scalar_param(param_dict, FP32_ALLREDUCE, FP32_ALLREDUCE_DEFAULT)`."
    )
    zh = key.localized("zh")
    assert "fp32_allreduce" in zh.title and zh.title != key.title
