#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "rtp_llm/cpp/config/RopeConfig.h"

namespace rtp_llm {

struct AttentionConfigs {
    int64_t    head_num      = 0;
    int64_t    kv_head_num   = 0;
    int64_t    size_per_head = 0;
    RopeConfig rope_config;
    bool       use_logn_attn      = false;
    bool       use_mla            = false;
    bool       is_causal          = true;
    bool       fuse_qkv_add_bias  = true;
    bool       need_rope_kv_cache = true;

    std::string to_string() const {
        std::ostringstream os;
        os << "head_num=" << head_num << " need_rope_kv_cache=" << need_rope_kv_cache
           << " fuse_qkv_add_bias=" << fuse_qkv_add_bias;
        return os.str();
    }
};

}  // namespace rtp_llm
