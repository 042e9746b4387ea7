"""Which words the index searches for a guard: fields and enums, never the language's own words or a
local variable's name (each of those made one real sglang review parse 1,578 files)."""

from __future__ import annotations

from reviewbot.analysis.names import _operand_names


def test_language_words_and_strings_are_not_searched() -> None:
    assert set(_operand_names("any(is_swa_layer(i) for i in layers)")) == {"is_swa_layer", "i", "layers"}
    assert _operand_names("isinstance(tree_cache, SWARadixCache)") == ["tree_cache", "SWARadixCache"]
    assert _operand_names('"Llama4" in arch') == ["arch"]
    assert _operand_names("static_cast<int>(n) > 0") == ["n"]


def test_a_variable_receiver_is_left_out_its_attributes_kept() -> None:
    assert _operand_names("node.swa_tombstone") == ["swa_tombstone"]
    assert _operand_names("config.rope_config.style") == ["rope_config", "style"]
    assert _operand_names("RopeStyle.No") == ["RopeStyle"]
    assert _operand_names("!use_kvcache") == ["use_kvcache"]
