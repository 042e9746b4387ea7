#include "rtp_llm/cpp/config/ModelConfig.h"

namespace rtp_llm {

AttentionConfigs ModelConfig::getAttentionConfigs(int64_t tp_size) const {
    AttentionConfigs config;
    config.head_num           = attn_config.head_num / tp_size;
    config.kv_head_num        = attn_config.kv_head_num / tp_size;
    config.size_per_head      = attn_config.size_per_head;
    config.rope_config        = attn_config.rope_config;
    config.use_logn_attn      = attn_config.use_logn_attn;
    config.use_mla            = attn_config.use_mla;
    config.is_causal          = attn_config.is_causal;
    config.need_rope_kv_cache = attn_config.need_rope_kv_cache;

    // if qk_norm or use embedding model, fuse add bias in gemm
    config.fuse_qkv_add_bias = qk_norm || (config.rope_config.style == RopeStyle::No && !use_kvcache) ? false : true;

    return config;
}

}  // namespace rtp_llm
