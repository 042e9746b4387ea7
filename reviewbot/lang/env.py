"""Environment reads recognised by shape (shared by both front ends).

Standard accessors: `os.environ.get("X", d)`, `os.getenv("X", d)`, `os.environ["X"]`, `getenv("X")`,
`std::getenv("X")`. Project helpers are recognised by their shape, not their name in one project: a
call whose callee's last name is env-like (`get_env_bool`, `getEnv`, `EnvUtil::getEnv`, `env_int`,
`read_env`) and whose first argument is a string literal spelled like a variable (`"USE_X"`); and the
module-of-variables idiom `envs.X` (`envs.VLLM_USE_V1`, `envs.SGLANG_X`).
"""

from __future__ import annotations

import re

__all__ = ["env_accessor", "env_attribute", "is_env_name", "helper_parse", "unquote"]

_STANDARD = {
    "os.environ.get": "os.environ.get",
    "environ.get": "os.environ.get",
    "os.getenv": "os.getenv",
    "getenv": "getenv",
    "std.getenv": "getenv",
    "secure_getenv": "getenv",
    "std.secure_getenv": "getenv",
    "os.environ.setdefault": "os.environ.setdefault",
}
# Env-like helper names: get_env, get_env_bool, getEnv, GetEnvInt, env_bool, read_env, _env_flag, envInt.
_HELPER = re.compile(
    r"_?(?:(?:get|read|load|parse|fetch)_?)?[Ee]nv(?:iron)?(?:_?[A-Za-z][A-Za-z0-9]*)?"
    r"|_?[a-z]\w*_env(?:_[a-z]\w*)?|[a-z]\w*Env(?:[A-Z]\w*)?"
)
_WRITERS = re.compile(r"_?(?:set|put|unset|del|delete|update|clear|with|patch|mock|restore|save)(?:_|[A-Z])")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{1,}")
_ENV_MODULES = frozenset({"envs", "env", "environment", "_envs", "envvars", "env_vars"})
_PARSE_WORDS = (
    ("bool", "bool"),
    ("flag", "bool"),
    ("int", "int"),
    ("float", "float"),
    ("double", "float"),
    ("list", "list"),
    ("str", "str"),
)


def is_env_name(text: str) -> bool:
    """`USE_X`, `REUSE_CACHE`: the spelling of an environment variable."""
    return _ENV_NAME.fullmatch(text) is not None


def unquote(literal: str) -> str | None:
    """The content of a plain string literal (`"X"`, `'X'`, `u8"X"` not included); None otherwise."""
    t = literal.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'" and "\\" not in t:
        return t[1:-1]
    return None


def env_accessor(callee: str) -> str | None:
    """The accessor a canonical callee is (`os.environ.get`, `getenv`, or the helper's own name), or None.

    A helper still needs a first argument spelled like a variable (the caller checks it)."""
    standard = _STANDARD.get(callee)
    if standard is not None:
        return standard
    last = callee.rsplit(".", 1)[-1]
    if last in ("get", "setdefault", "pop") or not _HELPER.fullmatch(last):
        return None
    if _WRITERS.match(last):
        return None  # `set_env("X", v)`, `setEnv`, `update_env`: writes, not reads
    return callee


def helper_parse(accessor: str) -> str:
    """What a helper's name says it parses to (`get_env_bool` -> `bool`, `getEnvInt` -> `int`); "" none."""
    last = accessor.rsplit(".", 1)[-1].lower()
    if last in ("getenv", "get", "setdefault") or accessor.startswith("os."):
        return ""
    for word, kind in _PARSE_WORDS:
        if word in last.replace("env", "", 1):
            return kind
    return ""


def env_attribute(expr: str) -> tuple[str, str] | None:
    """`envs.VLLM_USE_V1` -> (`VLLM_USE_V1`, `envs.X`); None for other attribute paths."""
    parts = expr.split(".")
    if len(parts) >= 2 and parts[-2] in _ENV_MODULES and is_env_name(parts[-1]):
        return parts[-1], f"{parts[-2]}.X"
    return None
