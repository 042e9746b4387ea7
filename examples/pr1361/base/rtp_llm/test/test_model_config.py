from rtp_llm.config.model_config import ModelConfig, TaskType


def test_language_model_uses_kvcache() -> None:
    assert ModelConfig(TaskType.LANGUAGE_MODEL).use_kvcache is True


def test_embedding_task_has_no_kvcache() -> None:
    assert ModelConfig(TaskType.DENSE_EMBEDDING).use_kvcache is False
