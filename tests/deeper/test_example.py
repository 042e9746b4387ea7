"""The bundled example (base -> round 1) end to end through review_change: the deeper findings, their
lines and evidence, and the reach sentence."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from reviewbot.analysis.coupled.switches import coupled_fields
from reviewbot.checks import comment_guard_mismatch, guard_ignores_coupled_flag
from reviewbot.example import EXAMPLE_DIR
from tests.deeper.helpers import Reviewed, example_repo, line_of, review_repo

CC = "rtp_llm/cpp/config/ModelConfig.cc"
AITER = "rtp_llm/models_py/modules/attention/rocm_impl/aiter.py"
NON_LM_TASKS = (
    "DENSE_EMBEDDING",
    "SPARSE_EMBEDDING",
    "COLBERT_EMBEDDING",
    "BGE_M3",
    "SEQ_CLASSIFICATION",
    "RERANKER",
    "LINEAR_SOFTMAX",
)


def _head_line(needle: str, path: str = CC) -> int:
    return line_of(EXAMPLE_DIR / "round1" / path, needle)


def _base_line(needle: str, path: str = AITER) -> int:
    return line_of(EXAMPLE_DIR / "base" / path, needle)


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Reviewed:
    repo, base, head = example_repo(tmp_path_factory.mktemp("example") / "repo")
    return review_repo(repo, base, head)


def test_guard_ignores_use_logn_attn_at_the_new_if(reviewed: Reviewed) -> None:
    (finding,) = reviewed.findings("guard-ignores-coupled-flag")
    assert (finding.path, finding.line) == (CC, _head_line("if (config.rope_config.style == RopeStyle::No"))
    consumed = _base_line("if self.use_logn_attn:")
    skipped = _base_line("fmha_input = self.rope_kvcache_op.forward(")
    assert finding.title == (
        "When this rule fires, `use_logn_attn` stops taking effect: only the skipped "
        "`FusedRopeKVCacheOp.forward` reads it, and the guard never tests it."
    )
    assert len(finding.title) <= 160 and len(finding.evidence) <= 3
    skipped_line, consumed_line, risk_line = finding.evidence
    assert skipped_line.startswith(
        f"skipped: {AITER}:{skipped} `fmha_input = self.rope_kvcache_op.forward(qkv, kv_cache, seq_len)` "
        "in `AiterPrefillImpl.forward` does not run when `need_rope_kv_cache` is false"
    )
    assert consumed_line == (
        "`use_logn_attn` (bool, rtp_llm/cpp/config/AttentionConfig.h:16) is read only by the skipped code: "
        f"`FusedRopeKVCacheOp.forward` ({AITER}:{consumed}); no other path reads it"
    )
    llama = EXAMPLE_DIR / "base/rtp_llm/models/llama.py"
    cohere = line_of(llama, "use_logn_attn = ckpt.get(", last=True)
    builder = line_of(llama, "def _create_config", last=True) - 1  # the decorator's line
    assert risk_line == (
        f"at risk, reaching the rule: Cohere (rtp_llm/models/llama.py:{builder}) sets `use_logn_attn` "
        f"(rtp_llm/models/llama.py:{cohere})"
    )
    extra = dict(finding.extra)
    built = _base_line("self.rope_kvcache_op = FusedRopeKVCacheOp(attn_configs)")
    assert (
        f"`self.rope_kvcache_op = FusedRopeKVCacheOp(attn_configs)` ({AITER}:{built})"
        in extra["chain.use_logn_attn"]
    )
    assert (
        f"gates `qkv = apply_logn_scaling(qkv, seq_len)` ({AITER}:{consumed + 1})"
        in extra["consumed.use_logn_attn"]
    )
    assert "Llama" not in extra["at_risk"] and "QWen" not in extra["at_risk"]
    assert "`&& !config.use_logn_attn`" in finding.suggestion
    assert "use_logn_attn=True) -> `need_rope_kv_cache` stays True" in finding.suggestion
    assert finding.replacement is not None and finding.replacement.strip() == (
        "if (config.rope_config.style == RopeStyle::No && !use_kvcache && !config.use_logn_attn) {"
    )


def test_fuse_qkv_add_bias_is_not_named(reviewed: Reviewed) -> None:
    for finding in reviewed.findings("guard-ignores-coupled-flag"):
        text = " ".join((finding.title, *finding.evidence, finding.suggestion))
        assert "fuse_qkv_add_bias" not in text


def test_comment_names_embedding_models_but_the_guard_reaches_every_non_lm_task(reviewed: Reviewed) -> None:
    (finding,) = reviewed.findings("comment-guard-mismatch")
    assert (finding.path, finding.line) == (CC, _head_line("// Skip rope+bias+transpose kernel"))
    assert "names `embedding models`" in finding.title
    assert "the guard also reaches BGE_M3, SEQ_CLASSIFICATION and 2 more" in finding.title
    assert "`apply_logn_scaling`" in finding.title and "applies `use_logn_attn`" in finding.title
    assert len(finding.evidence) <= 3
    assert "fires for every task_type other than LANGUAGE_MODEL" in finding.evidence[1]
    extra = dict(finding.extra)
    assert extra["also_reaches"] == "BGE_M3, SEQ_CLASSIFICATION, RERANKER, LINEAR_SOFTMAX"
    assert "DENSE_EMBEDDING" not in extra["also_reaches"]
    assert (
        f"`apply_logn_scaling` at {AITER}:{_base_line('qkv = apply_logn_scaling')}"
        in extra["skipped_behaviour"]
    )


def test_reach_sentence_names_the_non_lm_tasks_and_the_models_left_at_rope_style_no(
    reviewed: Reviewed,
) -> None:
    (override,) = reviewed.findings("unconditional-override")
    sentence = dict(override.extra)["reach"]
    assert sentence.startswith("The rule fires for every task_type other than LANGUAGE_MODEL (")
    for task in NON_LM_TASKS:
        assert task in sentence
    assert "whose rope_config.style is left at its default `No`" in sentence
    reached, _, not_reached = sentence.partition("Not reached by:")
    assert "Model configs that reach it:" in reached
    for model in (
        "Bert (rtp_llm/models/bert.py:",
        "Baichuan13B (rtp_llm/models/llama.py:",
        "Cohere (rtp_llm/models/llama.py:",
    ):
        assert model in reached
    assert "task_type DENSE_EMBEDDING" in reached
    for model in ("Llama", "QWen"):
        assert f"{model} (" not in reached and f"{model} (" in not_reached
    assert "sets rope_config.style to RopeStyle.Base" in not_reached


def test_a_consumed_field_forced_under_the_same_predicate_is_not_lost(tmp_path: Path) -> None:
    """Here the fused op also consumes fuse_qkv_add_bias; the ternary in getAttentionConfigs clears it
    whenever the new rule fires, so it is accounted for and only use_logn_attn is reported."""
    repo, base, head = example_repo(
        tmp_path / "repo",
        [
            (
                AITER,
                "        self.rope_style = attn_configs.rope_config.style\n",
                "        self.rope_style = attn_configs.rope_config.style\n"
                "        self.add_bias = attn_configs.fuse_qkv_add_bias\n",
            ),
            (
                AITER,
                "        if self.use_logn_attn:\n",
                "        if self.add_bias:\n            qkv = apply_bias(qkv)\n        if self.use_logn_attn:\n",
            ),
        ],
    )
    reviewed = review_repo(repo, base, head)
    ctx = reviewed.ctx
    records = {c.field: c for d in ctx.derivations for c in coupled_fields(d, ctx.index, ctx.calls)}
    bias = records["fuse_qkv_add_bias"]
    assert bias.consumers and bias.consumers[0].function == "FusedRopeKVCacheOp.forward"
    assert bias.forced.startswith("`fuse_qkv_add_bias` is forced to `False` whenever the guard holds")
    assert records["use_logn_attn"].forced == "" and not records["use_logn_attn"].constrained
    assert records["rope_config.style"].constrained
    (finding,) = reviewed.findings("guard-ignores-coupled-flag")
    assert "`use_logn_attn`" in finding.title
    assert "fuse_qkv_add_bias" not in " ".join((finding.title, *finding.evidence, finding.suggestion))


def test_without_the_call_graph_the_checks_degrade_to_the_gated_statements(reviewed: Reviewed) -> None:
    """No repository tree (no follow stage): nothing is followed into calls, nothing crashes, and the
    comment's population mismatch is still found from the index alone."""
    ctx = replace(reviewed.ctx, calls=None)
    assert list(guard_ignores_coupled_flag.run(ctx)) == []
    (finding,) = comment_guard_mismatch.run(ctx)
    assert "names `embedding models`" in finding.title and "apply_logn_scaling" not in finding.title
    assert "use_logn_attn" not in finding.title
