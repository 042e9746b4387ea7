from enum import Enum

from rtp_llm.ops import AttentionConfigs, RopeStyle


class TaskType(Enum):
    LANGUAGE_MODEL = "language_model"
    DENSE_EMBEDDING = "dense_embedding"
    SPARSE_EMBEDDING = "sparse_embedding"
    COLBERT_EMBEDDING = "colbert_embedding"
    BGE_M3 = "bge_m3"
    SEQ_CLASSIFICATION = "seq_classification"
    RERANKER = "reranker"
    LINEAR_SOFTMAX = "linear_softmax"


class ModelConfig:
    def __init__(self, task_type: TaskType = TaskType.LANGUAGE_MODEL) -> None:
        self.task_type = task_type
        self.attn_config = AttentionConfigs()
        self.qk_norm = False
        self.num_layers = 0

    @property
    def use_kvcache(self) -> bool:
        return self.task_type == TaskType.LANGUAGE_MODEL

    def fuse_qkv_add_bias(self) -> bool:
        # Python-side mirror of the C++ bias decision, used by the ROCm weight loader.
        if self.attn_config.rope_config.style == RopeStyle.No and not self.use_kvcache:
            return False
        return not self.qk_norm
