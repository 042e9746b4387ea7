"""Derivation facts: what the front ends extract, what the checks and truth tables consume.

All records are frozen; line numbers are 1-based in the revision the facts were taken from.
Targets and expressions use the canonical spelling of `predicate.canonical_operand`
(`config.rope_config.style`, `RopeStyle.No`, `False`).
"""

from __future__ import annotations

from collections.abc import Iterable
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
    "OwnerKind",
    "Owner",
    "DeclOrigin",
    "FieldDecl",
    "BindingKind",
    "Binding",
    "EnvRead",
    "OwnerVia",
    "Function",
    "FileFacts",
    "lang_for_path",
]


class Lang(str, Enum):
    CPP = "cpp"
    PYTHON = "python"


CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl")


def lang_for_path(path: str) -> Lang | None:
    lower = path.lower()
    if lower.endswith((".py", ".pyi")):
        return Lang.PYTHON
    if lower.endswith(CPP_SUFFIXES):
        return Lang.CPP
    return None


class OwnerVia(str, Enum):
    """How the owner (type) of a written or read object was found, best first; see `lang/owners.py`."""

    NONE = ""  # not known in the file (the index may still resolve it: `RepoIndex.owner_of`)
    SELF = "self"  # `self.x` / `this->x` / a bare member inside a method of the class
    DECLARED = "declared"  # a declared type: `T x;`, `x: T = ...`, a member declared `T m;` / `m: T`
    PARAM = "param"  # a parameter's type or annotation: `const T& cfg`, `cfg: T`
    CONSTRUCTOR = "constructor"  # assigned from a constructor call: `cfg = T(...)`, `auto c = T{}`
    BINDING = "binding"  # through a binding that joins the languages (pybind / torch class, `__getattr__`)
    FIELD = "field"  # (index) the only owner that declares the field
    NAME = "name"  # (index) the receiver's name, the last resort: `model_config` -> `ModelConfig`


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
    # The owner model (see `lang/owners.py`): what object the write lands in, as far as the file knows.
    receiver: str = (
        ""  # the written object as written, receiver kept: `self`, `config.rope_config`; "" for a local
    )
    owner: str = ""  # type path of the receiver: `ModelConfig` or `ModelConfig.rope_config` (index resolves)
    owner_via: OwnerVia = OwnerVia.NONE
    stmt_start: int | None = None  # first and last line of the whole statement (multi-line statements)
    stmt_end: int | None = None
    guard_spans: tuple[tuple[int, int], ...] = ()  # (first, last) line of each enclosing condition
    boolean: bool = False  # the value is a predicate (`a and not b`, `x == 1`, `!f`, `True`)
    names: tuple[
        str, ...
    ] = ()  # bare names the value reads as written (`x` of `x + self.y`), see `bare_names`
    via: str = ""  # a derivation through a local (`x = ... ; self.f = x`): the local's name (analysis only)
    via_line: int | None = None  # the line of the field write the local flows into


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
    owner: str = ""  # type path of the read object, as for `Assignment.owner`
    owner_via: OwnerVia = OwnerVia.NONE


@dataclass(frozen=True)
class FieldDefault:
    """A default value: a C++ member initialiser, an enum's first value, a Python class/dataclass default."""

    owner: str  # struct/class name
    field: str
    value: str  # canonical
    path: str
    line: int
    lang: Lang


class OwnerKind(str, Enum):
    STRUCT = "struct"  # a C++ struct (plain data by convention)
    CLASS = "class"  # a C++ class or a plain Python class
    DATACLASS = "dataclass"  # @dataclass, attrs (@define / @attr.s), pydantic models, NamedTuple, TypedDict


@dataclass(frozen=True)
class Owner:
    """A type that holds fields: a C++ struct/class, a Python class or dataclass."""

    name: str  # short name, the key owners are matched by (`ModelConfig`)
    qualname: str  # as declared with its scope (`rtp_llm::ModelConfig`, `Outer.Inner`)
    kind: OwnerKind
    path: str
    line: int
    lang: Lang
    bases: tuple[str, ...] = ()  # short names of the base classes
    # `__getattr__`/`__setattr__` forwarding to a member (`self.gpt_init_params`): the member's name.
    delegate: str = ""
    config: bool = False  # a config owner (see `owners.is_config_owner`)


class DeclOrigin(str, Enum):
    BODY = "body"  # declared in the class body: C++ member, Python class-level (annotated) attribute
    INIT = "init"  # first assigned in `__init__` / `__post_init__` (Python)


@dataclass(frozen=True)
class FieldDecl:
    """A field of an owner, with its declared (or evident) type and its default when constant."""

    owner: str  # short owner name
    field: str
    type: str  # short type name (`bool`, `int`, `RopeConfig`); "" unknown
    default: str | None  # canonical default; None when there is none or it is computed
    path: str
    line: int
    lang: Lang
    origin: DeclOrigin = DeclOrigin.BODY


class BindingKind(str, Enum):
    READWRITE = "readwrite"  # `def_readwrite` (and `_static`)
    READONLY = "readonly"  # `def_readonly` (and `_static`)
    PROPERTY = "property"  # `def_property` (getter and setter); `def_property_readonly` is READONLY
    METHOD = "method"  # `.def("name", &T::method)`


@dataclass(frozen=True)
class Binding:
    """A C++ member or method exposed to Python under a name (pybind11, torch::jit::class_)."""

    name: str  # the name Python code uses (`head_num`)
    owner: str  # the C++ class, short name (`GptInitParameter`)
    member: str  # the C++ member or method (`head_num_`); "" for a property built from lambdas
    kind: BindingKind
    exposed_as: str  # the Python class name given to the binding ("" when not written)
    path: str
    line: int

    @property
    def writable(self) -> bool:
        return self.kind in (BindingKind.READWRITE, BindingKind.PROPERTY)


@dataclass(frozen=True)
class EnvRead:
    """A read of an environment variable: the standard accessors and project helpers of that shape."""

    name: str  # the variable (`REUSE_CACHE`)
    default: str | None  # canonical default as written (`0`, `"1"`, `False`); None without one
    parse: str  # how the text becomes a value, `·` standing for the read: `bool(int(·))`, `· == "1"`; "" raw
    accessor: str  # `os.environ.get`, `os.getenv`, `os.environ[]`, `getenv`, `get_env_bool`, `envs.X`
    target: str  # canonical field or local the value is assigned to; "" when it is used in place
    path: str
    line: int
    function: str | None
    lang: Lang
    # the read with the calls and comparison that parse it, as the source writes it
    # (`bool(int(os.environ.get("X", "0")))`), for quoting; `parse` is its canonical shape
    written: str = ""


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
    owners: tuple[Owner, ...] = ()
    fields: tuple[FieldDecl, ...] = ()
    bindings: tuple[Binding, ...] = ()
    env_reads: tuple[EnvRead, ...] = ()
    parse_errors: int = 0  # count of ERROR/MISSING nodes; >0 means the facts may be incomplete
    # 1-based line ranges the parser could not read (ERROR/MISSING nodes, merged); the facts of every
    # other line are whole, so a change is unseen only where it touches one of these
    error_spans: tuple[tuple[int, int], ...] = ()

    def unparsed_lines(self, lines: Iterable[int]) -> list[int]:
        """Those of `lines` that lie in a region the parser could not read."""
        return [n for n in sorted(set(lines)) if any(a <= n <= b for a, b in self.error_spans)]

    def function_at(self, line: int) -> Function | None:
        best: Function | None = None
        for fn in self.functions:
            if fn.start_line <= line <= fn.end_line and (best is None or fn.start_line >= best.start_line):
                best = fn
        return best
