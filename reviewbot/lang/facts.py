"""Derivation facts: what the front ends extract, what the checks and truth tables consume.

All records are frozen; line numbers are 1-based in the revision the facts were taken from.
Targets and expressions use the canonical spelling of `predicate.canonical_operand`
(`config.rope_config.style`, `RopeStyle.No`, `False`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from reviewbot.lang.predicate import Pred

__all__ = [
    "Lang",
    "AssignKind",
    "Assignment",
    "PredicateUse",
    "GatedStmt",
    "FieldRead",
    "FieldDefault",
    "Function",
    "FileFacts",
    "lang_for_path",
]


class Lang(str, Enum):
    CPP = "cpp"
    PYTHON = "python"


_CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl")


def lang_for_path(path: str) -> Lang | None:
    lower = path.lower()
    if lower.endswith((".py", ".pyi")):
        return Lang.PYTHON
    if lower.endswith(_CPP_SUFFIXES):
        return Lang.CPP
    return None


class AssignKind(str, Enum):
    PLAIN = "plain"  # `x.f = v;` (guard is the enclosing if/else conditions, or None)
    TERNARY = "ternary"  # one arm of `x.f = c ? a : b;` (guard includes c or !c)
    KEYWORD = "keyword"  # `Config(f=v)` / `replace(cfg, f=v)` in Python
    BINDING = "binding"  # pybind `.def_readwrite("f", ...)` - an external writer
    AUGMENTED = "augmented"  # `x.f |= v`, `x.f += v`


@dataclass(frozen=True)
class Assignment:
    """One write of a field, with the conjunction of conditions that must hold for it to run."""

    target: str  # canonical target, e.g. `config.need_rope_kv_cache`
    field: str  # last component, e.g. `need_rope_kv_cache`
    value: str  # canonical value expression, e.g. `False`
    guard: Pred | None  # None: unconditional within its function
    path: str
    line: int  # line of the assignment statement
    function: str | None  # qualified name of the enclosing function, e.g. `ModelConfig::getAttentionConfigs`
    lang: Lang
    kind: AssignKind = AssignKind.PLAIN
    text: str = ""  # the source line, stripped
    guard_text: str = ""  # the innermost condition as written
    guard_line: int | None = None  # line of the innermost `if` (or of the ternary condition)
    branch_start: int | None = None  # first line of the guarded block (the `if` line for if-blocks)
    branch_end: int | None = None  # last line of the guarded block
    comment_above: str = ""  # comment lines directly above the innermost `if` (or the statement)
    comment_line: int | None = None
    logs_in_branch: bool = False  # the guarded block also logs (LOG/printf/logger./logging./print)
    checks_target_first: bool = False  # the guard reads the target itself (e.g. `if (!x.f_set)`)


@dataclass(frozen=True)
class PredicateUse:
    """A boolean condition as used in code: an `if`, a ternary condition, a `bool x = ...`."""

    pred: Pred
    text: str  # as written
    path: str
    line: int
    function: str | None
    lang: Lang


@dataclass(frozen=True)
class GatedStmt:
    """A statement whose execution depends on a read of a field."""

    line: int
    text: str
    calls: tuple[str, ...] = ()  # callee names in the statement, e.g. (`kv_cache_write_op`,)
    fields: tuple[str, ...] = ()  # attribute names read in the statement, e.g. (`use_logn_attn`,)


@dataclass(frozen=True)
class FieldRead:
    """A read of a field outside an assignment target; `gated` are the statements it controls."""

    field: str  # the field as read, e.g. `need_rope_kv_cache`
    expr: str  # canonical expression, e.g. `self.need_rope_kv_cache`
    path: str
    line: int
    function: str | None
    lang: Lang
    in_condition: bool  # read inside an if/while/ternary condition
    negated: bool = False  # the condition is `not x` / `!x`
    gated: tuple[GatedStmt, ...] = ()  # statements in the then-branch (or else-branch when negated)
    gated_else: tuple[GatedStmt, ...] = ()  # statements in the other branch
    alias: str | None = None  # when read through an alias: the alias name (e.g. `need_rope`)
    alias_line: int | None = None  # where the alias was bound (`self.need_rope = cfg.need_rope_kv_cache`)


@dataclass(frozen=True)
class FieldDefault:
    """A default value: a C++ member initialiser, an enum's first value, a Python class/dataclass default."""

    owner: str  # struct/class name
    field: str
    value: str  # canonical
    path: str
    line: int
    lang: Lang


@dataclass(frozen=True)
class Function:
    name: str  # qualified, e.g. `ModelConfig::getAttentionConfigs` or `BertModel._create_config`
    path: str
    start_line: int
    end_line: int
    lang: Lang


@dataclass(frozen=True)
class FileFacts:
    path: str
    lang: Lang
    functions: tuple[Function, ...] = ()
    assignments: tuple[Assignment, ...] = ()
    predicates: tuple[PredicateUse, ...] = ()
    reads: tuple[FieldRead, ...] = ()
    defaults: tuple[FieldDefault, ...] = ()
    # enum name -> its members in order (`RopeStyle` -> (`No`, `Base`, ...)); the first is the default
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    parse_errors: int = 0  # count of ERROR/MISSING nodes; >0 means the facts may be incomplete

    def function_at(self, line: int) -> Function | None:
        best: Function | None = None
        for fn in self.functions:
            if fn.start_line <= line <= fn.end_line and (best is None or fn.start_line >= best.start_line):
                best = fn
        return best
