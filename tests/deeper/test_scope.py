"""analysis.scope: which writes are config code (where an untested derivation may block a merge)."""

from __future__ import annotations

import dataclasses

import pytest

from reviewbot.analysis.scope import in_config_code, reads_config
from reviewbot.lang.facts import Assignment, Lang


def _write(target: str, path: str, function: str | None, owner: str = "") -> Assignment:
    lang = Lang.CPP if path.endswith((".cc", ".cpp", ".h")) else Lang.PYTHON
    return Assignment(
        target=target,
        field=target.rsplit(".", 1)[-1],
        value="64",
        guard=None,
        path=path,
        line=1,
        function=function,
        lang=lang,
        owner=owner,
    )


def _never(_: str) -> bool:
    return False


@pytest.mark.parametrize(
    ("target", "path", "function", "owner"),
    [
        ("config.need_rope_kv_cache", "rtp_llm/cpp/models/Attn.cc", "build", ""),  # a config receiver
        ("self.block_size", "pkg/engine.py", "ParallelConfig.__post_init__", ""),  # a config class's method
        ("self.x", "pkg/engine.py", "Engine.validate_args", ""),  # a validating function
        ("x", "python/sglang/srt/server_args.py", "ServerArgs._handle", ""),  # the config module
        ("chunk", "megatron/training/arguments.py", "_add_args", ""),
        ("params.n_batch", "src/main.cpp", "main", ""),  # `params` holds settings
        ("chunk_mb_", "src/Attn.cc", "Attn::init", "GptInitParameter"),  # owner type says so
    ],
)
def test_config_code(target: str, path: str, function: str | None, owner: str) -> None:
    assert in_config_code(_write(target, path, function, owner), _never)


@pytest.mark.parametrize(
    ("target", "path", "function"),
    [
        ("ml.merge_up_gate_exps", "src/llama-load-tensors.cpp", "create_tensors"),
        ("layer.weight", "python/pkg/quantization/fp8.py", "Fp8Scheme.create_weights"),
        ("request.num_tokens_total", "megatron/core/inference/engines/dynamic_engine.py", "_add_request"),
        ("f_rope_scale", "convert.py", "loadHFTransformerJson"),
    ],
)
def test_not_config_code(target: str, path: str, function: str) -> None:
    assert not in_config_code(_write(target, path, function), _never)


def test_a_class_the_repository_declares_as_config_counts() -> None:
    # `Knobs` says nothing by its name, but the index knows it as a config owner (declared defaults)
    a = _write("self.depth", "pkg/tree.py", "Knobs.resolve")
    assert not in_config_code(a, _never)
    assert in_config_code(a, lambda name: name == "Knobs")


@pytest.mark.parametrize(
    ("value", "guard"),
    [
        ("params->reserve_ratio_ * free_blocks / 100", ""),  # a ratio from the config object
        ("True", "envs.VLLM_DISABLE_SHARED_EXPERTS_STREAM"),  # a branch the environment picks
        ("params_base.speculative.n_ctx", ""),
    ],
)
def test_a_value_or_condition_read_from_configuration_is_config_code(value: str, guard: str) -> None:
    a = _write("reserve_", "src/scheduler/FIFOScheduler.cc", "FIFOScheduler::FIFOScheduler")
    a = dataclasses.replace(a, value=value, guard_text=guard)
    assert in_config_code(a)


@pytest.mark.parametrize("text", ["ggml_tensor_overhead()*(n_tensors + 1)", "!merged", "ctx.n_tokens > 0"])
def test_runtime_state_is_not_read_from_configuration(text: str) -> None:
    assert not reads_config(text)


@pytest.mark.parametrize(
    "text",
    ["self.config.ratio", "self.args.x * 2", "this->params.n", "self.cfg.block", "self.model_config.x"],
)
def test_a_chained_member_of_a_config_object_is_read_from_configuration(text: str) -> None:
    assert reads_config(text)


@pytest.mark.parametrize(
    ("path", "function", "target"),
    [
        ("pkg/inventory.py", "count", "self.total"),  # `env` inside a word is no environment
        ("pkg/envelope.py", "seal", "self.sealed"),
        ("pkg/confidence.py", "score", "confidence.value"),  # `conf` inside a word is no config
        ("src/common.h", "step", "state.n"),
    ],
)
def test_config_words_are_whole_words(path: str, function: str, target: str) -> None:
    assert not in_config_code(_write(target, path, function))
