"""CUDA attention through flashinfer: a paged KV cache written by a separate op."""

from rtp_llm.models_py.modules.attention.ops import apply_rope, fmha, write_kv_cache
from rtp_llm.ops import RopeStyle


class KVCacheWriteOp:
    def __init__(self, attn_configs) -> None:
        self.kv_head_num = attn_configs.kv_head_num

    def forward(self, qkv, kv_cache) -> None:
        if kv_cache is None:
            kv_cache = []
        write_kv_cache(qkv, kv_cache)


class PyFlashinferPrefillImpl:
    def __init__(self, attn_configs) -> None:
        self.need_rope_kv_cache = attn_configs.need_rope_kv_cache
        self.rope_style = attn_configs.rope_config.style
        self.kv_cache_write_op = KVCacheWriteOp(attn_configs)

    def forward(self, qkv, kv_cache):
        if self.rope_style != RopeStyle.No:
            qkv = apply_rope(qkv, self.rope_style)
        if self.need_rope_kv_cache:
            self.kv_cache_write_op.forward(qkv, kv_cache)
        return fmha(qkv)
