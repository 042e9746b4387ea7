"""Which derivations and predicates did the change add or alter? (pure; facts in, records out)

A *derivation* is a write of a config owner's field whose value or guard depends on something (other
fields, the environment, constants), or a write of a local that flows into such a field:

- `self.x = ...` / `this->x = ...` / a bare member written in a method of a *config owner*
  (`Owner.config`: a type named like configuration, `ModelConfig`, `ServerArgs`, `GptInitParameter`,
  or a C++ struct with member defaults; see `lang/owners.py`), or of a field the class body declares
  with a default;
- `cfg.x = ...` on an object whose type or name says it holds configuration (`config`, `cfg`,
  `attn_config`, `params`, `args`; not `weight.data_type`, not `layers[i].kernel`), and a config
  constructor's keyword (`ModelConfig(x=...)`, `replace(cfg, x=...)`);
- a member of any class set from the environment or to a boolean derived from a configuration object
  (`self.reuse_ = os.environ.get("REUSE") == "1"`, `self.use_logn = cfg.logn and not cfg.x`);
- `x = <guarded or computed value>` followed by `self.f = x` (or `cfg.f = x + 1`): the local's write
  is a derivation of `f` (`Assignment.via` names the local), with the local's guard and value; an index
  (`w[i]`) or a loop counter does not flow;
- not a constructor's declaration (`self.x = False`, `self.x = x` unguarded in `__init__` / a
  constructor), not a plain unguarded copy of a parameter (`self.x = x`), not pickling
  (`__setstate__`), not a script's entry point (`if __name__ == "__main__":`).

A derivation changed when any line of its statement (a multi-line statement counts as a whole), of its
guarding condition, or of the block between the condition and the statement was added or edited.

Which writes of locals reach a field write, and the values they give it, are followed in
`analysis.writes.local_flows`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from reviewbot.analysis.writes.local_flows import (
    DERIVATION_KINDS,
    DerivationWrite,
    flow_names,
    follow_local,
    guard_key,
    inline,
    is_param,
    locals_by_function,
)
from reviewbot.lang.facts import AssignKind, Assignment, DeclOrigin, FileFacts, OwnerVia, PredicateUse
from reviewbot.lang.index import DEFAULT_EXCLUDES, is_excluded, is_test_path
from reviewbot.lang.owners import PICKLING, is_config_name, is_constant_value, is_init_function
from reviewbot.model.change import ChangeSet

__all__ = [
    "ChangedDerivation",
    "assignment_anchor",
    "changed_derivations",
    "added_predicates",
    "derivation_writes",
]


@dataclass(frozen=True)
class ChangedDerivation:
    """A head assignment that the change added or whose guard/value it changed."""

    head: Assignment
    base: tuple[Assignment, ...]  # base writes of the same target in the same function (may be empty)
    new_branch: bool  # the guarded branch did not exist at base (new `if` or new assignment)


def assignment_anchor(a: Assignment) -> str:
    """Line-independent anchor of a guarded write: function, guard and statement."""
    guard = a.guard.key if a.guard is not None else ""
    return f"{a.function or ''}|{guard}|{a.target}={a.value}"


# A config's constructor keyword (`ModelConfig(use_x=flag)`, `replace(cfg, use_x=flag)`) sets the field too.
_FIELD_KINDS = (*DERIVATION_KINDS, AssignKind.KEYWORD)
# A binary arithmetic operator (`a*b/100`, `x+1`, `n//tp`), not a unary minus (`-1`).
_ARITHMETIC = re.compile(r"(?<=[\w)\]])(?://|\*\*|\*|/|%|\+|-|<<|>>)(?=[\w(.])")
_STRINGS = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")
_NESTED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|<[\w.,*&: ]*>")
_CALLEE = re.compile(r"([A-Za-z_][\w.]*)\(")
_PARSERS = frozenset(
    {"bool", "int", "float", "str", "str_to_bool", "strtobool", "to_bool", "literal_eval", "loads"}
)
_PATHS = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CONFIG_WORD = re.compile(
    r"(?i)conf|cfg|(?:^|_)(?:params?|parameters|args|arguments|settings|options|opts)$|^(?:params|args)_"
)


def _lines(a: Assignment) -> tuple[int, int]:
    start = a.stmt_start if a.stmt_start is not None else a.line
    end = a.stmt_end if a.stmt_end is not None else a.line
    return min(start, a.line), max(end, a.line)


def _touched(a: Assignment, added: set[int]) -> bool:
    start, end = _lines(a)
    if any(start <= n <= end for n in added):
        return True
    if a.guard_line is not None and a.guard_line in added:
        return True
    # Any enclosing condition, however far out (`if (a or b) and c:` around an inner `if`).
    if any(first <= n <= last for first, last in a.guard_spans for n in added):
        return True
    # A changed enclosing condition further out: any added line between the branch start and the write.
    return a.branch_start is not None and any(a.branch_start <= n <= a.line for n in added)


def _function_short(function: str | None) -> str:
    return (function or "").replace("::", ".").rsplit(".", 1)[-1]


def _config_classes(facts: FileFacts) -> set[str]:
    """Config owners declared in this file (`Owner.config`)."""
    return {o.name for o in facts.owners if o.config}


def _configish(name: str) -> bool:
    """A receiver or member named like configuration: `config`, `cfg`, `attn_config`, `params`, `args`."""
    return _CONFIG_WORD.search(name) is not None


def _is_field_write(a: Assignment, config: set[str], defaults: set[tuple[str, str]]) -> bool:
    """A write of a config owner's field (see the module doc)."""
    if a.owner_via is OwnerVia.SELF and "." not in a.owner:
        # `self.x` (Python: the class is in this file) or a C++ member write (the class may be
        # declared in a header: its name then has to say it holds configuration).
        return a.owner in config or is_config_name(a.owner) or (a.owner, a.field) in defaults
    if "." in a.target:
        # `cfg.x = ...`: the object's type or name has to say it holds configuration; a weights
        # struct or a tensor (`weight.data_type`, `layers[i].kernel`) is not one.
        if a.owner:
            root, *members = a.owner.split(".")
            if root in config or is_config_name(root) or any(_configish(m) for m in members):
                return True
        return any(_configish(part) for part in a.target.split(".")[:-1])
    return False  # a local


def _is_switch(a: Assignment, env_lines: set[tuple[str | None, int]]) -> bool:
    """A member set from the environment (`self.reuse_ = os.environ.get("REUSE") == "1"`), or computed
    from a configuration object's fields: a boolean (`self.use_logn = cfg.use_logn_attn and not cfg.x`)
    or arithmetic (`reserve_(config.params->ratio_ * free_blocks / 100)`), whatever class holds it.
    A copy (`x_ = cfg.x`) and an object built from them (`Embedding(cfg.x)`) are not."""
    start, end = _lines(a)
    if a.kind is AssignKind.KEYWORD:
        return False
    if a.guard_line is not None and (a.function, a.guard_line) in env_lines:
        return True  # the environment picks the branch
    if any((a.function, n) in env_lines for n in range(start, end + 1)) and not _builds_object(a.value):
        return True  # the environment gives the value (not an object sized by it, `torch.empty(envs.X)`)
    if not a.boolean and not _arithmetic(a.value):
        return False
    return any(any(_configish(p) for p in path.split(".")[:-1]) for path in _PATHS.findall(a.value))


def _builds_object(value: str) -> bool:
    """`value` is a call that builds or fetches something (`torch.empty(n)`, `Engine(x)`), not one that
    parses a text (`int(...)`, `str_to_bool(...)`) or reads the environment (`os.environ.get(...)`)."""
    m = _CALLEE.match(value)
    if m is None:
        return False
    last = m.group(1).rsplit(".", 1)[-1]
    return last not in _PARSERS and "env" not in last.lower() and last != "get"


def _arithmetic(value: str) -> bool:
    """`value` computes at its top level (`ratio*blocks()/100`), not inside a call (`Embedding(c.x*2)`)."""
    text = _STRINGS.sub('""', value)
    while text.startswith("(") and text.endswith(")") and _NESTED.fullmatch(text):
        text = text[1:-1]
    for _ in range(8):  # empty nested brackets from the inside out
        emptied = _NESTED.sub("()", text)
        if emptied == text:
            break
        text = emptied.replace("()", "\x00")
    return _ARITHMETIC.search(text.replace("\x00", "()")) is not None


def _is_member_write(a: Assignment) -> bool:
    """A write of an object's member (`self.x`, `this->x`, `obj.x`), not of a local."""
    return a.owner_via is OwnerVia.SELF or "." in a.target


def _script(a: Assignment) -> bool:
    """Under `if __name__ == "__main__":`: a script's entry point, not configuration code."""
    return a.guard is not None and any("__name__" in atom.text for atom in a.guard.atoms())


def _is_declaration(a: Assignment, copies_param: bool) -> bool:
    """A constructor's declaration (`self.x = False`, `self.x = x`) or a plain unguarded copy of a
    parameter (`self.x = x`): a setting, not a derivation."""
    if a.guard is not None or a.kind not in (AssignKind.PLAIN, AssignKind.KEYWORD):
        return False
    if copies_param:
        return True
    return is_init_function(a.function) and is_constant_value(a.value)


_SCALAR = re.compile(
    r"^(?:True|False|true|false|-?[\d.]+(?:e-?\d+)?[fFuUlL]*|\"[^\"]*\"|'[^']*'|[A-Z]\w*(?:(?:\.|::)\w+)+)$"
)


def _settings_defaults(facts: FileFacts) -> set[tuple[str, str]]:
    """Fields declared with a default in the class body (C++ member initialisers, Python class-level
    attributes) of a class that holds settings: written in a method, they are that class's settings
    even when its name is neutral. A class holds settings when most of its defaults are scalars
    (`bool`, numbers, strings, enum members); a dataclass of per-batch state (`input_ids: List[int] =
    None`, `seq_lens: torch.Tensor = None`, sglang's `ScheduleBatch`) does not."""
    body = [d for d in facts.fields if d.origin is DeclOrigin.BODY and d.default is not None]
    scalar: Counter[str] = Counter()
    other: Counter[str] = Counter()
    for d in body:
        (scalar if _SCALAR.match(d.default or "") else other)[d.owner] += 1
    return {(d.owner, d.field) for d in body if scalar[d.owner] > other[d.owner]}


def derivation_writes(facts: FileFacts) -> list[tuple[Assignment, tuple[Assignment, ...]]]:
    """The derivations of one file: (derivation, the statements whose lines belong to it).

    Field writes stand for themselves; a field write whose value reads locals of its function becomes
    one derivation per write of those locals that reaches it (see `ChangedDerivation`)."""
    config = _config_classes(facts)
    defaults = _settings_defaults(facts)
    locals_ = locals_by_function(facts)
    env_lines = {(e.function, e.line) for e in facts.env_reads}
    out: list[DerivationWrite] = []
    for a in facts.assignments:
        if a.kind not in _FIELD_KINDS or _function_short(a.function) in PICKLING or _script(a):
            continue
        if not _is_field_write(a, config, defaults) and not (
            _is_member_write(a) and _is_switch(a, env_lines)
        ):
            continue
        flows: list[DerivationWrite] = []
        operands: list[Assignment] = []
        for name in flow_names(a, locals_):
            found, parts = follow_local(a, name, locals_)
            flows.extend(found)
            operands.extend(parts)
        out.extend(flows)
        if flows and not operands:
            continue  # `self.f = x`: the writes of `x` are the derivations
        if not flows and not operands and _is_declaration(a, is_param(a.value, a.function, locals_)):
            continue
        out.append(DerivationWrite(inline(a, operands), (a, *operands)))
    out.sort(key=lambda w: (w.head.line, w.head.target, w.head.value, guard_key(w.head)))
    return [(w.head, w.parts) for w in out]


# A C-style cast of an enum or macro constant that is no operand of arithmetic (`c ? x :
# (uint32_t)LLAMA_NONE`): tightening an enum's type changes no value, so dropping or adding one is no
# new derivation. Casts of variables and of number literals stay (`(float)a / b`, `(int)0.5`, `(uint8_t)300`).
_CONSTANT_CAST = re.compile(
    r"(?:(?<=^)|(?<=[?:(,=]))\((?:const )?(?:unsigned |signed )?[A-Za-z_][\w:]*\)"
    r"(?=(?:[A-Z][A-Z0-9_]*|[A-Z_][\w]*::[A-Z][A-Z0-9_]*)(?:$|[,):;?]))"
)


def _uncast(value: str) -> str:
    return _CONSTANT_CAST.sub("", value)


def _same(a: Assignment, b: Assignment) -> bool:
    if guard_key(a) != guard_key(b):
        return False
    return a.value == b.value or (a.lang == "cpp" and _uncast(a.value) == _uncast(b.value))


def changed_derivations(
    change: ChangeSet,
    base_facts: dict[str, FileFacts],
    head_facts: dict[str, FileFacts],
    exclude: Sequence[str] = (),
) -> list[ChangedDerivation]:
    """Head derivations that the change added or whose guard/value it changed. Vendored trees
    (`DEFAULT_EXCLUDES`) and paths matching the extra `exclude` globs (`[review] exclude`) are not
    reviewed, as `build_index` does not search them."""
    globs = (*DEFAULT_EXCLUDES, *exclude)
    out: list[ChangedDerivation] = []
    for f in change.files:
        facts = head_facts.get(f.path)
        if facts is None or f.skipped is not None or is_test_path(f.path) or is_excluded(f.path, globs):
            continue
        added = set(f.added_lines)
        base = base_facts.get(f.old_path or f.path)
        # Earlier writes of the same target: the base's own statements and its derivations through locals.
        base_writes = (
            list(base.assignments) + [b for b, _ in derivation_writes(base)] if base is not None else []
        )
        seen: set[tuple[int, str, str, str]] = set()
        for a, parts in derivation_writes(facts):
            if not any(_touched(p, added) for p in parts):
                continue
            key = (a.line, a.target, a.value, guard_key(a))
            if key in seen:
                continue
            seen.add(key)
            before = tuple(b for b in base_writes if b.target == a.target and b.function == a.function)
            if any(_same(b, a) for b in before):
                continue  # moved or reformatted, not changed
            new_branch = not any(guard_key(b) == guard_key(a) for b in before)
            out.append(ChangedDerivation(head=a, base=before, new_branch=new_branch))
    return out


def added_predicates(change: ChangeSet, head_facts: dict[str, FileFacts]) -> list[PredicateUse]:
    """Predicate uses on added lines of non-test source files."""
    out: list[PredicateUse] = []
    for f in change.files:
        facts = head_facts.get(f.path)
        if facts is None or is_test_path(f.path):
            continue
        added = set(f.added_lines)
        out.extend(p for p in facts.predicates if p.line in added)
    return out
