"""analysis.literal_typos: which compared literals read as a misspelling of the project's own spelling."""

from __future__ import annotations

import pytest

from reviewbot.analysis.literal_typos import compared_literals, top_level_strings, typo_of


@pytest.mark.parametrize(
    ("wrong", "right"),
    [("chaglm4", "CHATGLM4"), ("<|im_emd|>", "<|im_end|>"), ("bfp16", "bf16"), ("flashinfre", "flashinfer")],
)
def test_one_letter_edits_are_typos(wrong: str, right: str) -> None:
    assert typo_of(wrong, right)


@pytest.mark.parametrize(
    ("wrong", "right"),
    [
        ("qwen3", "qwen2"),  # a digit: another model
        ("phi3", "phi"),
        ("flash-attn", "flash_attn"),  # a separator
        ("glm-4.6v", "glm-4.6*"),  # a glob
        ("Auto", "auto"),  # case alone
        ("trtllm", "trtllm_mla"),  # more than one edit
    ],
)
def test_other_edits_are_other_names(wrong: str, right: str) -> None:
    assert not typo_of(wrong, right)


def test_compared_literals_are_values_and_patterns() -> None:
    assert compared_literals('} else if (tmpl == "chaglm4" || x) {') == [("chaglm4", False)]
    assert compared_literals('if strcmp(argv[i], "--flash-attn") == 0') == [("--flash-attn", False)]
    assert compared_literals('if x in ("auto", "flashinfer"):') == [
        ("flashinfer", False)
    ]  # "auto": too short
    assert compared_literals('elif "merger" in name:') == [("merger", True)]
    assert compared_literals('if name.startswith("deepseek"):') == [("deepseek", True)]
    # stored, commented or inside a message: not compared
    assert compared_literals('BACKENDS = ["triton", "flashinfer"]') == []
    assert compared_literals('# if x == "deepseek":') == []
    assert compared_literals('for name in ("enorm", "hnorm"):') == []
    assert compared_literals("""raise ValueError(f"types: ['fp16', 'bfp16']. Got: {val}")""") == []


def test_strings_inside_strings_are_not_values() -> None:
    line = """f"Supported: ['fp16', 'bfp16']" + 'x' """
    assert [t for _, _, t in top_level_strings(line)] == ["Supported: ['fp16', 'bfp16']", "x"]
