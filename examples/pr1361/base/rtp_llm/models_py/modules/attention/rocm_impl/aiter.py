"""ROCm attention through aiter: the fused rope + KV-cache kernel, then FMHA."""

from rtp_llm.models_py.modules.attention.ops import apply_logn_scaling, apply_rope, fmha, write_kv_cache
from rtp_llm.ops import RopeStyle


class FusedRopeKVCacheOp:
    """One kernel: log-n query scaling, rotary embedding and the KV-cache write."""

    def __init__(self, attn_configs) -> None:
        self.use_logn_attn = attn_configs.use_logn_attn
        self.rope_style = attn_configs.rope_config.style

    def forward(self, qkv, kv_cache, seq_len: int):
        if self.use_logn_attn:
            qkv = apply_logn_scaling(qkv, seq_len)
        if self.rope_style != RopeStyle.No:
            qkv = apply_rope(qkv, self.rope_style)
        if kv_cache is not None:
            write_kv_cache(qkv, kv_cache)
        return qkv


class AiterPrefillImpl:
    def __init__(self, attn_configs) -> None:
        self.attn_configs = attn_configs
        self.rope_kvcache_op = FusedRopeKVCacheOp(attn_configs)

    def forward(self, qkv, kv_cache, seq_len: int):
        if self.attn_configs.need_rope_kv_cache:
            fmha_input = self.rope_kvcache_op.forward(qkv, kv_cache, seq_len)
        else:
            # PACKED_QKV goes straight to FMHA.
            fmha_input = qkv
        return fmha(fmha_input)
