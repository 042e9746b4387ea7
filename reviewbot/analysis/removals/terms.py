"""What a removed statement mentions and whether it is about configuration (pure), for `analysis.removals.guards`.

The guard and validation detectors (`analysis.removals.dropped`, `analysis.removals.guards`) ask the same questions
of a statement (`lang.clauses.Clause`): whether the diff touched it or its conditions, which words and
names it reads (what a test of it would mention), and whether a validation's condition reads the
configuration (an environment variable, an object named like a config, a config owner's field) rather
than a tensor's shape or a local. Those shared questions, and the word lists behind them, live here.
"""

from __future__ import annotations

import re

from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import Clause, ClauseKind
from reviewbot.lang.env import env_sources
from reviewbot.lang.owners import is_config_name

__all__ = ["about_config", "mentioned_names", "touches", "words"]

_PATH = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?![\w'\"(])")
_WORD = re.compile(r"[A-Za-z_]\w*")
_NOISE = frozenset(
    {"self", "this", "not", "and", "or", "None", "True", "False", "is", "in", "os", "environ", "get", "raise",
     "throw", "assert", "Exception", "ValueError", "RuntimeError", "AssertionError", "std", "runtime_error",
     "invalid_argument", "return", "len", "int", "str", "float", "bool"}
)  # fmt: skip


def touches(c: Clause, lines: frozenset[int]) -> bool:
    return any(n in lines for n in range(c.line, c.end_line + 1)) or any(g.line in lines for g in c.guards)


def words(*texts: str) -> tuple[str, ...]:
    found = [w for t in texts for w in _WORD.findall(re.sub(r"(['\"]).*?\1", " ", t)) if w not in _NOISE]
    return tuple(dict.fromkeys(w for w in found if len(w) > 2))


# Objects named like a configuration: `config.x`, `model_cfg.x`, `args.x`, `gpt_init_params.x`, `server_args.x`
# (not `params.x`: in op code that is the op's parameter pack).
_CONFIG_RECEIVER = re.compile(
    r"(?i)(?:^|[^\w])\w*(?:config|cfg|conf|args|arguments|settings|options|init_params?|init_parameters?)\w*\.\w"
)


# Declared types of runtime state, not settings: a config-like owner can also hold a tensor or the
# context it builds from (`llm_build_context::lctx`). Judged per identifier of the type, by its last
# word (`ggml_tensor`, `llama_context`, `CUDAStream`): `KVCacheType`, `BackendType`,
# `llama_context_params`, `CacheConfig` name settings.
_RUNTIME_WORD = re.compile(
    r"(?i)(?:^|_|(?<=[a-z]))(?:tensor|buffer|stream|mutex|thread|event|context|allocator|graph|handle)(?:_t)?$"
)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _runtime(type_: str) -> bool:
    names = _IDENT.findall(type_)
    return any(_RUNTIME_WORD.search(n) for n in names) and not any(is_config_name(n) for n in names)


def _fields(s: Side, runtime: bool) -> set[str]:
    """Fields of the config owners the two revisions of the file declare (`ModelConfig::head_num`):
    those of a setting's type (`runtime=False`) or of a runtime type (a tensor, a buffer, a context)."""
    out: set[str] = set()
    for facts in (s.base_facts, s.head_facts):
        if facts is None:
            continue
        config = {o.name for o in facts.owners if o.config or is_config_name(o.name)}
        out.update(d.field for d in facts.fields if d.owner in config and _runtime(d.type) is runtime)
        if not runtime:
            out.update(d.field for d in facts.defaults if d.owner in config)
    return out


def _reads_config(texts: list[str], c: Clause, s: Side) -> bool:
    if any(env_sources(t) for t in texts) or any(_CONFIG_RECEIVER.search(t) for t in texts):
        return True
    parts = c.function.replace("::", ".").split(".")
    if len(parts) >= 2 and is_config_name(parts[-2]):
        return True  # a method of a config class checks its own members
    return bool(set(words(*texts)) & _fields(s, runtime=False))


def about_config(c: Clause, s: Side) -> bool:
    """A validation whose condition reads the configuration: an environment variable, an object named
    like a config (`config.x`, `params.x`, `args.x`), or a field of a config owner (`head_num` in a
    `ModelConfig` method) — not a tensor's shape or a local's value. A check is judged by its own
    condition first; one that reads runtime state (`assert(buffer_is_host(lctx.inp_K_shift->buffer))`)
    validates no setting whatever branch it sits in (`if (kv_self.has_shift)`), and one that reads
    neither is judged by its branch (`FT_CHECK(world_size % tp == 0)` under `if (config.tp_size > 1)`)."""
    guards = [g.text for g in c.guards]
    if c.kind is not ClauseKind.CHECK:
        return _reads_config(guards or [c.text], c, s)
    if _reads_config([c.text], c, s):
        return True
    if set(words(c.text)) & _fields(s, runtime=True):
        return False
    return bool(guards) and _reads_config(guards, c, s)


def mentioned_names(c: Clause) -> tuple[str, ...]:
    """What a test of the clause would mention: the variables it reads or writes, the field it writes,
    the fields its conditions test (not the function: a test of a shared builder mentions it for every
    model)."""
    env = [c.env_name, *c.env_sources, *(n for g in c.guards for n in env_sources(g.text))]
    written = c.text.split("=", 1)[0] if c.kind is ClauseKind.ASSIGN else ""
    fields = [p.rsplit(".", 1)[-1] for p in _PATH.findall(" ".join([written, *(g.text for g in c.guards)]))]
    if c.kind.validates:  # the names it checks, in its own condition (`assert x > 1, "..."`) too
        fields += [p.rsplit(".", 1)[-1] for p in _PATH.findall(re.sub(r"(['\"]).*?\1", " ", c.text))]
    return tuple(dict.fromkeys(n for n in [*env, *fields] if n and n not in _NOISE and len(n) > 2))
