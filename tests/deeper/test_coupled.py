"""What the forced flag turns off, on the annotated fixture repositories: the call chain, the consumed
fields, and which of them the guard tests or the derivation forces neutral (truth tables)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.analysis.coupled.skipped import skipped_behaviour
from reviewbot.analysis.coupled.switches import CoupledField, coupled_fields
from tests.deeper.helpers import Reviewed, review_fixture

RULE = "guard-ignores-coupled-flag"


def _coupled(reviewed: Reviewed) -> dict[str, CoupledField]:
    ctx = reviewed.ctx
    (d,) = [d for d in ctx.derivations if d.head.field == "need_rope_kv_cache"]
    return {c.field: c for c in coupled_fields(d, ctx.index, ctx.calls)}


def test_cpp_member_object_built_from_the_config_in_another_file(tmp_path: Path) -> None:
    reviewed = review_fixture(RULE, "cpp-fused-op", tmp_path / "repo")
    ctx = reviewed.ctx
    assert ctx.calls is not None and "cpp/ops/FusedRopeOp.cc" in ctx.calls.files  # found through the include
    found = _coupled(reviewed)
    logn = found["use_logn_attn"]
    (consumer,) = logn.consumers
    assert (consumer.path, consumer.line, consumer.function) == (
        "cpp/ops/FusedRopeOp.cc",
        7,
        "FusedRopeOp::forward",
    )
    assert consumer.alias == "use_logn_attn_" and consumer.alias_line == 4
    assert (consumer.skipped.path, consumer.skipped.line, consumer.skipped.read_line) == (
        "cpp/attn/PrefillImpl.cc",
        11,
        10,
    )
    (step,) = consumer.chain
    assert "runs `FusedRopeOp::forward`" in step and "rope_op_(std.make_unique<FusedRopeOp>(cfg))" in step
    assert not logn.constrained and logn.forced == ""
    assert found["rope_config.style"].constrained  # the guard tests the rope style itself


def test_cpp_sibling_cleared_by_a_ternary_under_the_same_predicate_is_forced(tmp_path: Path) -> None:
    found = _coupled(review_fixture(RULE, "cpp-forced-sibling", tmp_path / "repo"))
    bias = found["fuse_qkv_add_bias"]
    assert (
        bias.forced
        == "`fuse_qkv_add_bias` is forced to `False` whenever the guard holds (cpp/config/ModelConfig.cc:8)"
    )
    assert sorted((w.line, w.value) for w in bias.writes) == [(8, "False"), (8, "True")]


def test_python_two_call_levels_through_an_alias(tmp_path: Path) -> None:
    reviewed = review_fixture(RULE, "py-two-call-levels", tmp_path / "repo")
    ((skipped, stmt),) = skipped_behaviour(
        reviewed.ctx.derivations[0], reviewed.ctx.index, reviewed.ctx.calls
    )
    assert (skipped.path, skipped.line, skipped.alias, skipped.alias_line) == (
        "pkg/attn/prefill.py",
        11,
        "self.need_rope",
        6,
    )
    assert stmt.text == "qkv = self._prepare(qkv, kv_cache)"
    logn = _coupled(reviewed)["use_logn_attn"]
    (consumer,) = logn.consumers
    assert (consumer.path, consumer.line, consumer.function) == ("pkg/attn/kernels.py", 8, "RopeOp.__call__")
    first, second = consumer.chain
    assert "runs `PrefillImpl._prepare`" in first
    assert (
        "runs `RopeOp.__call__`" in second
        and "`self.rope_op = RopeOp(attn_cfg)` (pkg/attn/prefill.py:7)" in second
    )


def test_python_guard_that_tests_the_field_constrains_it(tmp_path: Path) -> None:
    found = _coupled(review_fixture(RULE, "py-guard-tests-flag", tmp_path / "repo"))
    assert found["use_logn_attn"].constrained


def test_python_sibling_cleared_in_the_same_branch_is_forced(tmp_path: Path) -> None:
    found = _coupled(review_fixture(RULE, "py-forced-sibling", tmp_path / "repo"))
    assert found["fuse_qkv_add_bias"].forced.startswith("`fuse_qkv_add_bias` is forced to `False`")


def test_a_config_field_passed_to_the_skipped_call_is_consumed_there(tmp_path: Path) -> None:
    found = _coupled(review_fixture(RULE, "py-field-argument", tmp_path / "repo"))
    (consumer,) = found["use_logn_attn"].consumers
    assert (consumer.line, consumer.chain) == (7, ())
    assert "fused_rope(qkv, style=self.cfg.rope_style, logn=self.cfg.use_logn_attn)" in consumer.gates
