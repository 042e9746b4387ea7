// Python bindings of the C++ configs (trimmed to what the example needs).
#include "rtp_llm/cpp/config/ModelConfig.h"

namespace py = pybind11;

namespace rtp_llm {

void registerAttentionConfigs(py::module& m) {
    py::class_<AttentionConfigs>(m, "AttentionConfigs")
        .def(py::init<>())
        .def_readwrite("head_num", &AttentionConfigs::head_num)
        .def_readwrite("use_logn_attn", &AttentionConfigs::use_logn_attn)
        .def_readwrite("fuse_qkv_add_bias", &AttentionConfigs::fuse_qkv_add_bias)
        .def_readwrite("need_rope_kv_cache", &AttentionConfigs::need_rope_kv_cache);
}

void registerModelConfig(py::module& m) {
    py::class_<ModelConfig>(m, "ModelConfig")
        .def(py::init<>())
        .def_readwrite("attn_config", &ModelConfig::attn_config)
        .def_readwrite("use_kvcache", &ModelConfig::use_kvcache)
        .def("getAttentionConfigs", &ModelConfig::getAttentionConfigs);
}

}  // namespace rtp_llm
