"""Which guards name a model family (`analysis.reach.families`): the population missing-tests names for P1."""

import pytest

from reviewbot.analysis.reach.families import model_families
from reviewbot.lang.predicate import And, Atom, Not


@pytest.mark.parametrize(
    ("atom", "names"),
    [
        ('"DeepseekV3ForCausalLM" == model_arch', ["DeepseekV3ForCausalLM"]),
        (
            'model_arch in ["Qwen3MoeForCausalLM", "Glm4MoeForCausalLM"]',
            ["Qwen3MoeForCausalLM", "Glm4MoeForCausalLM"],
        ),
        ('"Llama4" in model_arch', ["Llama4"]),
        ('hf_config.architectures[0] == "GptOssForCausalLM"', ["GptOssForCausalLM"]),
    ],
)
def test_named_families(atom: str, names: list[str]) -> None:
    assert model_families(And((Atom("is_cuda"), Atom(atom)))) == (names, atom)


@pytest.mark.parametrize(
    "guard",
    [
        Atom("1 < tp_size"),  # a setting, not a model
        Atom('model_arch != "GptOssForCausalLM"'),  # excludes a family: names nobody who reaches it
        Not(Atom('"DeepseekV3ForCausalLM" == model_arch')),  # needed false
        Atom('"fp8" == kv_cache_dtype'),  # a literal, but not the architecture
    ],
)
def test_not_families(guard: Atom | Not) -> None:
    assert model_families(guard) == ([], "")
