"""Pure-Python stand-in for the pybind module of the C++ configs (rtp_llm/cpp/pybind/ConfigInit.cc)."""

from dataclasses import dataclass, field
from enum import IntEnum


class RopeStyle(IntEnum):
    No = 0
    Base = 1
    Glm2 = 2
    DynamicNTK = 3
    QwenDynamicNTK = 4
    Yarn = 5
    Llama3 = 6
    Mrope = 7


@dataclass
class RopeConfig:
    style: RopeStyle = RopeStyle.No
    dim: int = 0
    base: int = 10000


@dataclass
class AttentionConfigs:
    head_num: int = 0
    kv_head_num: int = 0
    size_per_head: int = 0
    rope_config: RopeConfig = field(default_factory=RopeConfig)
    use_logn_attn: bool = False
    use_mla: bool = False
    fuse_qkv_add_bias: bool = True
    need_rope_kv_cache: bool = True
