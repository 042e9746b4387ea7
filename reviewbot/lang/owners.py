"""The owner model's text helpers: type names, config owners, constants (shared by both front ends).

An *owner* is a type that holds fields (a C++ struct or class, a Python class or dataclass). Writes
and reads are matched to owners by the type of their receiver as far as it can be known, best first:

1. `self.x` / `this->x` / a bare member inside a method: the enclosing class (`OwnerVia.SELF`);
2. a declared type: `T x;`, `x: T = ...`, a member declared `T m;` / `m: T` (`DECLARED`);
3. a parameter's type or annotation: `const T& cfg`, `cfg: T` (`PARAM`);
4. a constructor call: `cfg = T(...)`, `auto cfg = std::make_shared<T>(...)` (`CONSTRUCTOR`);
5. a binding joining the languages: a Python class whose `__getattr__` forwards to a bound C++ object
   (`BINDING`, resolved by the index);
6. in the index only: the one owner that declares the field (`FIELD`), and last, the receiver's name
   (`NAME`: `model_config` -> `ModelConfig`), documented as a guess.

The front ends record a *type path*: a type name followed by the members to go through
(`ModelConfig.rope_config` for `config.rope_config.x` with `config: ModelConfig`); the index finishes
the path with the members' declared types (`RepoIndex.resolve_type`).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "short_type",
    "is_config_name",
    "is_constant_value",
    "literal_type",
    "snake_to_camel",
    "DATACLASS_DECORATORS",
    "DATACLASS_BASES",
    "PICKLING",
    "is_init_function",
]

# Wrappers whose (first) template or subscript argument is the type that holds the fields.
_WRAPPERS = frozenset(
    {
        "shared_ptr",
        "unique_ptr",
        "weak_ptr",
        "optional",
        "reference_wrapper",
        "Optional",
        "Annotated",
        "ClassVar",
        "Final",
        "Ptr",
        "SharedPtr",
    }
)
_QUALIFIERS = re.compile(r"\b(?:const|volatile|typename|struct|class|enum|mutable|static|constexpr|inline)\b")
_TEMPLATE = re.compile(r"^([\w:.]+)\s*[<\[](.*)[>\]]$", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*")

DATACLASS_DECORATORS = frozenset(
    {"dataclass", "dataclasses.dataclass", "attr.s", "attr.attrs", "attrs.define", "define", "attrs.frozen",
     "frozen", "attr.define", "attrs.mutable", "mutable", "pydantic.dataclasses.dataclass"}
)  # fmt: skip
DATACLASS_BASES = frozenset(
    {"BaseModel", "BaseSettings", "NamedTuple", "TypedDict", "Struct", "DataClassJsonMixin"}
)
# Functions that restore or copy state field by field: their writes are neither settings nor derivations.
PICKLING = frozenset(
    {"__setstate__", "__getstate__", "__reduce__", "__reduce_ex__", "__copy__", "__deepcopy__"}
)

# Type names that say "this holds configuration": `ModelConfig`, `GptInitModelParameters`, `ServerArgs`.
_CONFIG_NAME = re.compile(
    r"(?:Config|Configs|Conf|Cfg|Params|Parameters|Parameter|Param|Args|Arguments|Settings|Options|Opts)$"
)


@lru_cache(maxsize=1 << 14)
def short_type(text: str) -> str:
    """The short name of the type that holds the fields: `const rtp_llm::ModelConfig&` -> `ModelConfig`,
    `std::shared_ptr<Cfg>` -> `Cfg`, `Optional["Cfg"]` -> `Cfg`, `Cfg | None` -> `Cfg`; "" when not a
    plain named type (`int*[3]`, a lambda)."""
    t = text.strip().strip("\"'")
    if not t:
        return ""
    if "|" in t and "[" not in t:
        parts = [p.strip() for p in t.split("|") if p.strip() not in ("None", "")]
        t = parts[0] if len(parts) == 1 else ""
    t = _QUALIFIERS.sub(" ", t)
    t = t.replace("&", " ").replace("*", " ").strip()
    for _ in range(4):
        m = _TEMPLATE.match(t)
        if m is None:
            break
        outer = m.group(1).replace("::", ".").rsplit(".", 1)[-1]
        if outer not in _WRAPPERS:
            t = m.group(1)
            break
        t = _split_args(m.group(2))[0].strip().strip("\"'")
        t = _QUALIFIERS.sub(" ", t).replace("&", " ").replace("*", " ").strip()
    t = t.replace("::", ".").rsplit(".", 1)[-1].strip()
    return t if _NAME.fullmatch(t) else ""


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments of a template or subscript list."""
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def is_config_name(name: str) -> bool:
    """A type name that says it holds configuration (`ModelConfig`, `ServerArgs`, `GptInitParameter`)."""
    return _CONFIG_NAME.search(name) is not None


_STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")
_WORDS = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_BUILTINS = frozenset(
    {
        "dict",
        "list",
        "set",
        "tuple",
        "frozenset",
        "int",
        "float",
        "str",
        "bool",
        "bytes",
        "True",
        "False",
        "None",
    }
)


@lru_cache(maxsize=1 << 14)
def is_constant_value(value: str) -> bool:
    """A canonical value that depends on nothing at run time: literals, `[]`, `Enum.X`, `T()`, `str()`,
    `std.string("a")`."""
    names = _WORDS.findall(_STRING.sub('""', value))
    return all(n[:1].isupper() or n in _BUILTINS or n == "std" for n in names)


def literal_type(value: str) -> str:
    """The type a literal value evidently has (`True` -> bool, `3` -> int); "" otherwise."""
    if value in ("True", "False"):
        return "bool"
    if re.fullmatch(r"-?\d+", value):
        return "int"
    if re.fullmatch(r"-?(?:\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE]-?\d+)f?", value):
        return "float"
    if value[:1] in ("'", '"') or value.startswith(("f'", 'f"')):
        return "str"
    return ""


def snake_to_camel(name: str) -> str:
    """`model_config` -> `ModelConfig`; leading and trailing underscores go (`config_` -> `Config`)."""
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_") if p)


def is_init_function(function: str | None) -> bool:
    """Python `__init__` / `__post_init__`, or a C++ constructor (`ns::A::A`)."""
    if not function:
        return False
    parts = function.replace("::", ".").split(".")
    last = parts[-1]
    if last in ("__init__", "__post_init__"):
        return True
    return len(parts) >= 2 and last == parts[-2]
