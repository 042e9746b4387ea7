"""Is a write config code? The scope in which "this derivation has no test" is worth blocking a merge.

A derived setting that is wrong fails silently downstream; a tensor's shape, a loader's scratch size or a
request's bookkeeping that is wrong fails loudly or is another kind of code, with its own tests. So a
rule that asks for a focused test of a truth table (missing-tests) blocks only where the write is
configuration: the object written holds configuration (its type or name says so: `ModelConfig`,
`server_args`, `params`), the value or its condition is read from configuration or the environment
(`reserve_ = params->ratio_ * blocks`, `if envs.VLLM_X:`), the function derives configuration
(`getAttentionConfigs`, `validate_args`, `__post_init__` of a config class), or the file is the project's
configuration module (`server_args.py`, `arguments.py`, `config.cc`, `arg_utils.py`). Elsewhere the
finding is a nit.

Names, not types: the facts of one file do not say what a receiver is beyond its spelling and its owner,
and projects spell configuration the same few ways (see `lang/owners.py`).

Pure: an assignment and the repository's config-owner lookup in, an answer out.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reviewbot.lang.facts import Assignment
from reviewbot.lang.owners import is_config_name

__all__ = ["in_config_code", "in_config_scope", "reads_config"]

# The words that say "configuration" in a name once it is split into words (`attn_config`, `ModelConfig`,
# `server_args`, `params_base`, `gpt_init_model_parameters.py`, `compiler_flags.py`): whole words only,
# so `confidence`, `inventory` or `envelope` say nothing.
_WORDS = frozenset(
    {
        "conf", "config", "configs", "configuration", "cfg", "settings", "params", "param", "parameters",
        "hparams", "args", "arguments", "arg", "options", "opts", "flags",
    }
)  # fmt: skip
_FILE_WORDS = _WORDS | {"env", "envs"}
_SPLIT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# What a value or a condition reads from configuration: the environment (`os.environ`, `getenv`,
# `envs.VLLM_X`), or a member of an object spelled like configuration (`config.ratio`, `params_base.n_ctx`,
# `self.model_config.x`, `params->reserve_ratio_`). The lookahead leaves the member to be matched as the
# next object of a chain (`self.config.ratio`).
_ENV_READ = re.compile(r"\b(?:environ|getenv|envs\.[A-Z_]|get_env\w*\(|env_\w+\()")
_MEMBER_OF = re.compile(r"([A-Za-z_]\w*)\s*(?:\.|->)(?=\s*[A-Za-z_])")


def _words(name: str) -> set[str]:
    return {w.lower() for w in _SPLIT.findall(name)}


def _config_word(name: str) -> bool:
    """A receiver, member or class spelled like configuration (whole words)."""
    return not _words(name).isdisjoint(_WORDS)


def _config_function(name: str) -> bool:
    """A function that derives or checks configuration: `getAttentionConfigs`, `validate_args`,
    `_verify_args`, `__post_init__`."""
    words = _words(name)
    if name == "__post_init__" or not words.isdisjoint(_WORDS):
        return True
    return any(w.startswith(("validat", "verify")) for w in words)


def _config_file(path: str) -> bool:
    """The project's configuration module: `server_args.py`, `arguments.py`, `config.cc`, `arg_utils.py`,
    `gpt_init_model_parameters.py`, `envs.py`, `common/arg.cpp`, `ModelConfig.cc`, `vllm/config/*.py`."""
    *folders, name = path.split("/")
    if any(_words(f) & {"config", "configs", "conf", "cfg", "settings"} for f in folders):
        return True  # a module of the configuration package: `vllm/config/scheduler.py`
    return not _words(name.split(".", 1)[0]).isdisjoint(_FILE_WORDS)


def in_config_code(a: Assignment, is_config_owner: Callable[[str], bool] = lambda _: False) -> bool:
    """The write lands in configuration, happens in a function that derives it, or in a config file.

    `is_config_owner` may add the repository's own config classes; the checks pass none: the index
    counts every C++ struct with member defaults as one (`llama_context`, a runtime state), too wide to
    decide what blocks a merge."""
    if reads_config(a.value) or reads_config(a.guard_text):
        return True  # a runtime value derived from configuration or the environment is a derivation
    return in_config_scope(a.path, a.function, a.target, a.owner, is_config_owner)


def reads_config(text: str) -> bool:
    """`text` (a value or a condition) reads the environment or a member of a configuration object."""
    if not text:
        return False
    if _ENV_READ.search(text) is not None:
        return True
    return any(_config_word(m.group(1)) for m in _MEMBER_OF.finditer(text))


def in_config_scope(
    path: str,
    function: str | None,
    target: str,
    owner: str = "",
    is_config_owner: Callable[[str], bool] = lambda _: False,
) -> bool:
    """`in_config_code` for what a write is made of: its file, function, target and owner type."""
    if _config_file(path):
        return True
    *classes, short = (function or "").replace("::", ".").split(".")
    if short and _config_function(short):
        return True
    if any(is_config_name(c) or is_config_owner(c) for c in classes if c):
        return True  # a method of a config class: `ModelConfig::getAttentionConfigs`, `ServerArgs.resolve`
    owner_root = owner.split(".", 1)[0] if owner else ""
    if owner_root and (is_config_name(owner_root) or is_config_owner(owner_root)):
        return True
    receiver = re.split(r"\.|->", target)[:-1]
    return any(_config_word(part) for part in receiver if part != "self")
