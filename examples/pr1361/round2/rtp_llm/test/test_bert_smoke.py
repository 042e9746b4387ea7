"""Smoke test: a BERT embedding forward through the ROCm attention path."""

from rtp_llm.models.bert import Bert
from rtp_llm.models_py.modules.attention.rocm_impl.aiter import AiterPrefillImpl


def test_bert_embedding_forward() -> None:
    config = Bert._create_config({"num_attention_heads": 4, "hidden_size": 64})
    impl = AiterPrefillImpl(config.attn_config)
    assert impl.forward([1, 2, 3], None, 3) == [1, 2, 3]
