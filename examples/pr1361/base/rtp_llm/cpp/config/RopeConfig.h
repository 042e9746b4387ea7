#pragma once

namespace rtp_llm {

enum class RopeStyle {
    No = 0,
    Base = 1,
    Glm2 = 2,
    DynamicNTK = 3,
    QwenDynamicNTK = 4,
    Yarn = 5,
    Llama3 = 6,
    Mrope = 7,
};

struct RopeConfig {
    RopeStyle style = RopeStyle::No;
    int dim = 0;
    int base = 10000;
    float scale = 1.0;
};

}  // namespace rtp_llm
