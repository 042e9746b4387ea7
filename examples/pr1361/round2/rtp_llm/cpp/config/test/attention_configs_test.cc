// Pins the truth table of ModelConfig::getAttentionConfigs for need_rope_kv_cache.
#include <cstdio>

#include "rtp_llm/cpp/config/ModelConfig.h"

using namespace rtp_llm;

static int failures = 0;

static void expect(bool ok, const char* what) {
    if (!ok) {
        std::printf("FAILED: %s\n", what);
        ++failures;
    }
}

static AttentionConfigs derive(RopeStyle style, bool use_kvcache, bool need_rope_kv_cache) {
    ModelConfig model;
    model.attn_config.head_num                = 8;
    model.attn_config.rope_config.style       = style;
    model.attn_config.need_rope_kv_cache      = need_rope_kv_cache;
    model.use_kvcache                         = use_kvcache;
    return model.getAttentionConfigs(1);
}

int main() {
    expect(derive(RopeStyle::No, false, true).need_rope_kv_cache == false, "(No, no kv cache, true) -> false");
    expect(derive(RopeStyle::No, true, true).need_rope_kv_cache == true, "(No, kv cache, true) keeps true");
    expect(derive(RopeStyle::Base, false, true).need_rope_kv_cache == true, "(Base, no kv cache, true) keeps true");
    expect(derive(RopeStyle::No, false, false).need_rope_kv_cache == false, "(No, no kv cache, false) stays false");
    return failures == 0 ? 0 : 1;
}
