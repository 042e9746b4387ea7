from rtp_llm.config.model_config import ModelConfig, TaskType


class Bert:
    @staticmethod
    def _create_config(ckpt: dict) -> ModelConfig:
        config = ModelConfig(task_type=TaskType.DENSE_EMBEDDING)
        config.attn_config.head_num = ckpt.get("num_attention_heads", 12)
        config.attn_config.size_per_head = ckpt.get("hidden_size", 768) // config.attn_config.head_num
        config.attn_config.need_rope_kv_cache = False
        config.num_layers = ckpt.get("num_hidden_layers", 12)
        return config


class Roberta(Bert):
    pass
