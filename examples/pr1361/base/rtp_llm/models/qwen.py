from rtp_llm.config.model_config import ModelConfig, TaskType
from rtp_llm.ops import RopeStyle


class QWen:
    @staticmethod
    def _create_config(ckpt: dict) -> ModelConfig:
        config = ModelConfig(task_type=ckpt.get("task_type", TaskType.LANGUAGE_MODEL))
        config.attn_config.rope_config.style = RopeStyle.Base
        config.attn_config.use_logn_attn = ckpt.get("use_logn_attn", True)
        return config
