from rtp_llm.config.model_config import ModelConfig, TaskType
from rtp_llm.ops import RopeStyle


class Llama:
    @staticmethod
    def _create_config(ckpt: dict) -> ModelConfig:
        config = ModelConfig(task_type=TaskType.LANGUAGE_MODEL)
        config.attn_config.head_num = ckpt.get("num_attention_heads", 32)
        config.attn_config.rope_config.style = RopeStyle.Base
        config.attn_config.use_logn_attn = ckpt.get("use_logn_attn", False)
        return config


class Baichuan13B(Llama):
    """ALiBi positions: no rotary embedding, so the rope style stays at its default."""

    @staticmethod
    def _create_config(ckpt: dict) -> ModelConfig:
        config = ModelConfig(task_type=TaskType.LANGUAGE_MODEL)
        config.attn_config.head_num = ckpt.get("num_attention_heads", 40)
        return config


class Cohere(Llama):
    @staticmethod
    def _create_config(ckpt: dict) -> ModelConfig:
        config = ModelConfig(task_type=ckpt.get("task_type", TaskType.LANGUAGE_MODEL))
        config.attn_config.use_logn_attn = ckpt.get("use_logn_attn", False)
        return config
