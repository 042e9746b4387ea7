#pragma once

#include <cstdint>

#include "rtp_llm/cpp/config/AttentionConfig.h"

namespace rtp_llm {

class ModelConfig {
public:
    AttentionConfigs attn_config;
    bool             use_kvcache = true;
    bool             qk_norm     = false;
    int64_t          num_layers  = 0;

    AttentionConfigs getAttentionConfigs(int64_t tp_size) const;
};

}  // namespace rtp_llm
