"""What a guard says about the code that can run under it and the fields it makes moot
(reviewbot.analysis.coupled.feasible), and which reads of a field still take effect (analysis.readers)."""

from __future__ import annotations

from reviewbot.analysis.coupled.feasible import blocked_by, moot_reason, name_words, ruled_out, switch_words
from reviewbot.analysis.coupled.readers import _describes
from reviewbot.analysis.coupled.skipped import _certainly_skipped
from reviewbot.lang.parse import parse_file
from reviewbot.lang.predicate import And, Atom, Not

ROPE_OFF = Atom("config.rope_config.style == RopeStyle.No")
NO_KV = Not(Atom("use_kvcache"))


def test_name_words_split_camel_and_snake_case() -> None:
    assert name_words("FlashInferTRTLLMDecodeImpl.forward") == [
        "flash",
        "infer",
        "trtllm",
        "decode",
        "impl",
        "forward",
    ]
    assert name_words("FusedRopeKVCacheDecodeOpBase::forward")[:6] == [
        "fused",
        "rope",
        "kv",
        "cache",
        "decode",
        "op",
    ]
    assert name_words("use_kv_cache") == ["use", "kv", "cache"]
    assert switch_words("use_logn_attn") == ["logn", "attn"]


def test_a_guard_without_kv_cache_rules_out_decode_code_only() -> None:
    (rule,) = ruled_out(And((ROPE_OFF, NO_KV)))
    assert rule.literal == "!use_kvcache" and "decode" in rule.words
    assert blocked_by(
        ("XQAImpl.forward", "FusedRopeKVCacheDecodeOp", "FusedRopeKVCacheDecodeOp.forward"), (rule,)
    )
    assert blocked_by(("PyFlashinferDecodeImpl.forward",), (rule,)) is rule
    assert blocked_by(("FlashInferTRTLLMSpecDecodeImpl.forward",), (rule,)) is rule
    # A decoder layer is not a decode step; prefill code runs.
    assert blocked_by(("BertDecoderLayer.forward", "TRTMHAImpl.forward"), (rule,)) is None
    assert ruled_out(And((ROPE_OFF, Atom("use_kvcache")))) == ()  # KV cache on: decoding may run
    assert ruled_out(ROPE_OFF) == () and ruled_out(None) == ()
    assert ruled_out(Not(Atom("model.use_cache")))[0].literal == "!model.use_cache"


def test_the_guard_makes_the_parameters_of_a_feature_it_turns_off_moot() -> None:
    guard = And((ROPE_OFF, NO_KV))
    assert moot_reason(guard, "rope_config.is_neox_style") == (
        "`rope_config.is_neox_style` configures `rope_config`, which "
        "`config.rope_config.style == RopeStyle.No` turns off"
    )
    assert moot_reason(guard, "rope_config.style") != ""  # the switch itself is tested anyway
    assert moot_reason(guard, "use_logn_attn") == ""
    assert moot_reason(guard, "kv_cache_dtype").startswith("`kv_cache_dtype` configures `kvcache`")
    assert moot_reason(guard, "kv_head_num") == ""  # `kv` alone does not name the KV cache
    top = Atom("cfg.rope_style == RopeStyle.NO")
    assert moot_reason(top, "rope_neox").startswith("`rope_neox` configures `rope`")
    assert moot_reason(top, "use_logn_attn") == ""
    logn_off = Not(Atom("config.use_logn_attn"))
    assert moot_reason(logn_off, "logn_seq_len").startswith("`logn_seq_len` configures `logn_attn`")
    # A guard that turns rope on (`== Base`) makes nothing moot.
    assert moot_reason(Atom("config.rope_config.style == RopeStyle.Base"), "rope_config.dim") == ""
    assert moot_reason(Not(Atom("config.rope_config.style == RopeStyle.No")), "rope_config.dim") == ""


def test_logging_and_rendering_are_not_uses() -> None:
    assert _describes("AttentionConfigs::DebugAttentionConfigStr", 'oss << "x" << use_logn_attn;')
    assert _describes("AttnConfig.__repr__", "return f'{self.use_logn_attn}'")
    assert _describes("Impl.forward", 'logger.info("logn %s", cfg.use_logn_attn)')
    assert _describes("Impl::run", 'RTP_LLM_LOG_INFO("logn %d", cfg.use_logn_attn);')
    assert not _describes("Impl.forward", "if cfg.use_logn_attn:")
    assert not _describes("SoftmaxOp::run", "scale(scores, cfg.use_logn_attn);")


def test_a_forced_flag_skips_a_branch_only_where_it_decides_it() -> None:
    source = """
def f(a, cfg):
    if a is not None and cfg.flag:
        x()
    else:
        y()
    if a and not cfg.flag:
        w()
    if a or cfg.flag:
        v()
    else:
        u()
    if cfg.flag:
        t()
"""
    facts = parse_file("pkg/f.py", source)
    assert facts is not None
    reads = {r.line: r for r in facts.reads if r.field == "flag"}
    # `a and flag`: forcing False skips the then-branch; forcing True does not skip the else-branch.
    assert _certainly_skipped(facts, reads[3], "False") and not _certainly_skipped(facts, reads[3], "True")
    # `a and not flag`: forcing True skips the then-branch.
    assert _certainly_skipped(facts, reads[7], "True") and not _certainly_skipped(facts, reads[7], "False")
    # `a or flag`: forcing True skips the else-branch; forcing False does not skip the then-branch.
    assert _certainly_skipped(facts, reads[9], "True") and not _certainly_skipped(facts, reads[9], "False")
    assert _certainly_skipped(facts, reads[13], "False") and _certainly_skipped(facts, reads[13], "True")
