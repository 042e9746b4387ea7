"""CUDA attention through TensorRT kernels; decides on its own whether the fused op is needed."""

from rtp_llm.models_py.modules.attention.ops import apply_rope, fmha, write_kv_cache
from rtp_llm.ops import RopeStyle


class TrtPrefillImpl:
    def __init__(self, attn_configs) -> None:
        self.rope_style = attn_configs.rope_config.style

    def forward(self, qkv, kv_cache):
        need_rope = self.rope_style != RopeStyle.No
        if need_rope or kv_cache is not None:
            if need_rope:
                qkv = apply_rope(qkv, self.rope_style)
            if kv_cache is not None:
                write_kv_cache(qkv, kv_cache)
        return fmha(qkv)
