"""guard-ignores-coupled-flag's criteria on the annotated fixture repositories, one criterion per case and
language: the record of each consumed field says why it is, or is not, a lost switch."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.analysis.coupled.switches import CoupledField, coupled_fields
from tests.deeper.helpers import Reviewed, review_fixture

RULE = "guard-ignores-coupled-flag"


def _fields(reviewed: Reviewed) -> dict[str, CoupledField]:
    ctx = reviewed.ctx
    (d,) = [d for d in ctx.derivations if d.head.field == "need_rope_kv_cache"]
    return {c.field: c for c in coupled_fields(d, ctx.index, ctx.calls)}


@pytest.mark.parametrize("lang", ["cpp", "py"])
def test_an_int_field_consumed_in_the_skipped_code_is_not_a_switch(lang: str, tmp_path: Path) -> None:
    reviewed = review_fixture(RULE, f"{lang}-int-field-consumed", tmp_path / "repo")
    head_num = _fields(reviewed)["head_num"]
    assert head_num.feasible and head_num.switch == "" and not head_num.lost
    assert reviewed.findings(RULE) == []


@pytest.mark.parametrize("lang", ["cpp", "py"])
def test_a_switch_also_read_on_another_path_is_not_lost(lang: str, tmp_path: Path) -> None:
    reviewed = review_fixture(RULE, f"{lang}-switch-read-elsewhere", tmp_path / "repo")
    logn = _fields(reviewed)["use_logn_attn"]
    assert logn.switch == "bool" and logn.feasible and logn.readers.scanned
    where = "cpp/attn/SoftmaxOp.cc" if lang == "cpp" else "pkg/attn/softmax.py"
    assert [loc.path for loc in logn.readers.elsewhere] == [where]
    assert not logn.lost and reviewed.findings(RULE) == []


@pytest.mark.parametrize(("lang", "field"), [("cpp", "rope_config.is_neox_style"), ("py", "rope_neox")])
def test_a_rope_parameter_under_a_rope_off_guard_is_moot(lang: str, field: str, tmp_path: Path) -> None:
    reviewed = review_fixture(RULE, f"{lang}-rope-param-rope-off", tmp_path / "repo")
    param = _fields(reviewed)[field]
    assert param.switch == "bool" and param.feasible and not param.readers.elsewhere
    assert "turns off" in param.moot and not param.lost
    assert reviewed.findings(RULE) == []


@pytest.mark.parametrize("lang", ["cpp", "py"])
def test_a_switch_consumed_only_on_the_decode_path_is_no_evidence(lang: str, tmp_path: Path) -> None:
    reviewed = review_fixture(RULE, f"{lang}-decode-path-only", tmp_path / "repo")
    logn = _fields(reviewed)["use_logn_attn"]
    assert logn.consumers and logn.feasible == ()
    assert logn.blocked.endswith("decoding needs a KV cache") and not logn.lost
    assert reviewed.findings(RULE) == []


@pytest.mark.parametrize(
    ("lang", "lost", "terms"),
    [
        ("cpp", ["use_alibi", "use_logn_attn"], "`&& !config.use_alibi && !config.use_logn_attn`"),
        ("py", ["qk_norm", "use_logn_attn"], "`and cfg.qk_norm == QkNorm.NONE and not cfg.use_logn_attn`"),
    ],
)
def test_one_finding_names_every_switch_lost_in_an_inherited_method(
    lang: str, lost: list[str], terms: str, tmp_path: Path
) -> None:
    reviewed = review_fixture(RULE, f"{lang}-inherited-two-switches", tmp_path / "repo")
    fields = _fields(reviewed)
    assert sorted(f for f, c in fields.items() if c.lost) == lost
    (finding,) = reviewed.findings(RULE)
    assert all(f"`{name}`" in finding.title for name in lost) and "stop taking effect" in finding.title
    assert len(finding.title) <= 160 and len(finding.evidence) <= 3
    assert terms in finding.suggestion
    assert dict(finding.extra)["field"] == ", ".join(lost)
    # The base-class method is where both are read; the print/DebugString lines are not other readers.
    assert all(not fields[name].readers.elsewhere for name in lost)
    assert "Base" in finding.title


def test_an_enum_tested_in_a_condition_is_a_switch(tmp_path: Path) -> None:
    fields = _fields(review_fixture(RULE, "py-inherited-two-switches", tmp_path / "repo"))
    qk = fields["qk_norm"]
    assert (qk.switch, qk.default, qk.neutral) == ("enum", "QkNorm.NONE", "False")
