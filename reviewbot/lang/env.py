"""Environment reads recognised by shape (shared by both front ends).

Standard accessors: `os.environ.get("X", d)`, `os.getenv("X", d)`, `os.environ["X"]`, `getenv("X")`,
`std::getenv("X")`. Project helpers are recognised by their shape, not their name in one project: a
call whose callee's last name is env-like (`get_env_bool`, `getEnv`, `EnvUtil::getEnv`, `env_int`,
`read_env`) and whose first argument is a string literal spelled like a variable (`"USE_X"`); and the
module-of-variables idiom `envs.X` (`envs.VLLM_USE_V1`, `envs.SGLANG_X`).

Writes are told apart from reads (`env_write`): `os.environ["NEW"] = os.environ.get("OLD")`,
`os.environ.setdefault("X", v)`, `os.putenv`, `setenv("X", v, 1)` / `putenv("X=v")`. A write whose value
reads another variable is an alias of the old name to the new one (`env_sources` of the value).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from reviewbot.lang.index import DEFAULT_EXCLUDES, TestRef, is_excluded
from reviewbot.model.change import RepoTree, read_many

__all__ = [
    "env_accessor",
    "env_attribute",
    "is_env_name",
    "helper_parse",
    "unquote",
    "env_write",
    "env_sources",
    "doc_mentions",
    "is_doc_path",
]

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


# Canonical spellings (`common.canonical_expr`) of the writes: subscript assignment, setdefault, putenv.
_SUBSCRIPT_WRITE = re.compile(r"^(?:os\.)?environ\[(['\"])([^'\"]+)\1\](?:=(?!=)|\|=)(.*)$", re.S)
_CALL_WRITE = re.compile(
    r"^(?:os\.environ\.setdefault|environ\.setdefault|os\.putenv|(?:std\.)?setenv|_?set_?env\w*|setEnv\w*)"
    r"\((['\"])([^'\"]+)\1,(.*)\)$",
    re.S,
)
_PUTENV = re.compile(r"^(?:std\.)?putenv\((['\"])([A-Za-z_]\w*)=([^'\"]*)\1\)$")
# A read inside an expression: `os.environ.get("X"`, `os.environ["X"]`, `getenv("X"`, `get_env_bool("X"`.
_CALL_READ = re.compile(r"([A-Za-z_][\w.]*)\(\s*(['\"])([A-Za-z_]\w*)\2")
_SUBSCRIPT_READ = re.compile(r"(?<![\w.])(?:os\.)?environ\[\s*(['\"])([A-Za-z_]\w*)\1\s*\](?!\s*=(?!=))")


def env_write(statement: str) -> tuple[str, str] | None:
    """(variable, value) of a statement that writes the environment (canonical spelling); None else."""
    if "'" not in statement and '"' not in statement:
        return None  # every write names its variable in a string literal
    for pattern in (_SUBSCRIPT_WRITE, _CALL_WRITE, _PUTENV):
        m = pattern.match(statement.strip())
        if m is not None:
            return m.group(2), m.group(3)
    return None


def env_sources(expr: str) -> tuple[str, ...]:
    """Environment variables an expression reads, in order of first appearance."""
    if "'" not in expr and '"' not in expr:
        return ()  # every read names its variable in a string literal (most statements have none)
    found: list[tuple[int, str]] = []
    for m in _CALL_READ.finditer(expr):
        callee, name = m.group(1), m.group(3)
        accessor = env_accessor(callee)
        if accessor is not None and (is_env_name(name) or accessor.startswith(("os.", "getenv"))):
            found.append((m.start(), name))
    found.extend((m.start(), m.group(2)) for m in _SUBSCRIPT_READ.finditer(expr))
    return tuple(dict.fromkeys(name for _, name in sorted(found)))


# Documentation files: where operators read which switches exist.
_DOC_FILE = re.compile(r"(?i)(?:^|/)(?:readme(?:\.txt)?|[^/]+\.(?:md|rst|adoc|markdown))$")


def is_doc_path(path: str) -> bool:
    """README files and Markdown / reStructuredText / AsciiDoc documents."""
    return _DOC_FILE.search(path) is not None


def doc_mentions(
    tree: RepoTree, names: Iterable[str], exclude: Sequence[str] = DEFAULT_EXCLUDES
) -> dict[str, tuple[TestRef, ...]]:
    """Lines of the documentation that mention each of `names` as a whole word, by path and line
    (vendored trees left out): the places an operator learns a switch from."""
    wanted = sorted({n for n in names if n})
    if not wanted:
        return {}
    rx = re.compile(r"(?<![\w])(" + "|".join(re.escape(n) for n in wanted) + r")(?![\w])")
    paths = sorted(p for p in tree.paths() if is_doc_path(p) and not is_excluded(p, exclude))
    texts = read_many(tree, paths)
    found: dict[str, list[TestRef]] = {}
    for path in paths:
        body = texts.get(path)
        if not body:
            continue
        for number, line in enumerate(body.split("\n"), start=1):
            for name in sorted(set(rx.findall(line))):
                found.setdefault(name, []).append(TestRef(path, number, line.strip()[:200], name))
    return {n: tuple(refs) for n, refs in sorted(found.items())}
