"""Derived values that a later write makes dead (pure).

A new unconditional write of a config field (`config.special_tokens.eos_token_id = 2`) is checked
against the writes that run before or after it:

- CALL: earlier in the same function a call builds or fills the same object (`config =
  X.from_huggingface(config_json)`, `load(config, ...)`), and that callee derives the same field from
  its input (`config.special_tokens.eos_token_id = config_json["eos_token_id"]`): the new constant
  overwrites it for every checkpoint. An earlier derived write of the same target in the same function
  counts the same way.
- ENV: the write is a model builder's forced value (`config.tp_split_emb_and_lm_head = False` in
  `Llava._create_config`), and a method of the config owner (not its constructor) writes the same
  field again from an environment variable: once an operator sets the variable for the fleet, the
  model's constraint is gone.

Not overridden: a later write that reads the earlier value (`x = x or default`, `x = max(x, ...)`),
a guarded later write (exclusive branches, `if x is None:`), a callee whose write is a constant too,
a function that returns between the two writes, a later write in a `catch` / `except` clause (it runs
only when deriving failed), and writes that are not in one flow (`analysis.writes.scopes`): in two
lambdas (two command-line options' handlers), in two `catch` clauses, or on a local of its own in
another loop or block (`for (auto& r : a) r->x = f(r);` then `for (auto& r : b) r->x = g;`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from reviewbot.analysis.sides import Side
from reviewbot.analysis.text import renamed_operands
from reviewbot.analysis.writes.consumed import consumed
from reviewbot.analysis.writes.scopes import FileScopes, ScopeKind
from reviewbot.lang.clauses import ClauseKind
from reviewbot.lang.common import has_word
from reviewbot.lang.facts import AssignKind, Assignment, Lang
from reviewbot.lang.follow import is_builder
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.owners import is_init_function

__all__ = ["OverrideKind", "Override", "overrides"]


class OverrideKind(str, Enum):
    CALL = "call"
    ENV = "env"


@dataclass(frozen=True)
class Override:
    kind: OverrideKind
    path: str
    line: int
    target: str  # the new write's target
    field: str
    value: str
    other: Assignment  # the derivation made dead (CALL) or the later writer (ENV)
    callee: str = ""  # CALL: the function that derived it
    env: str = ""  # ENV: the variable
    written: str = ""  # the new write as written in the source (`result->stage_status = grpc::Status(...)`)
    other_written: str = ""  # the other write as written, when its file is at hand


_LITERAL = re.compile(r"""^(?:-?[\d.]+[a-zA-Z]*|True|False|None|true|false|nullptr|(['"]).*\1)$""", re.S)
_CALLEE = re.compile(r"([A-Za-z_][\w.]*)\(")


def _constant(value: str) -> bool:
    return _LITERAL.match(value.strip()) is not None


def _short(function: str | None) -> str:
    return (function or "").replace("::", ".").rsplit(".", 1)[-1]


def _root(target: str) -> str:
    return re.split(r"[.\[]", target, maxsplit=1)[0]


def _suffix(target: str) -> str:
    """The target without its receiver root: `config.special_tokens.eos_token_id` -> `special_tokens.eos_token_id`."""
    parts = target.split(".")
    return ".".join(parts[1:]) if len(parts) > 1 else target


# A tensor or parameter built in place (`layer.w_scale = torch.nn.Parameter(...)`, `torch.empty(...)`):
# weights the model loads, not a configuration a derivation decides.
_TENSOR = re.compile(
    r"^(?:(?:torch\.)?(?:nn\.)?(?:Parameter|Buffer)|torch\.(?:empty|zeros|ones|full|tensor|rand\w*|arange|cat|stack)\w*"
    r"|(?:np|numpy|jnp|cupy)\.(?:empty|zeros|ones|full|array|asarray|arange)\w*)\("
)


def _new_writes(s: Side, scopes: FileScopes | None, own: bool = False) -> list[Assignment]:
    """The change's new unconditional writes of a field of some object; with `own`, also those of the
    method's own object outside its constructor (`self.x = ...` in `__post_init__`)."""
    if s.head_facts is None:
        return []
    return [
        a
        for a in s.head_facts.assignments
        if a.line in s.added
        and a.guard is None
        and a.kind is AssignKind.PLAIN
        and (a.receiver not in ("self", "this", "") or (own and a.receiver in ("self", "this")))
        and not has_word(a.value, a.field)
        and not _TENSOR.match(a.value)
        and not (is_init_function(a.function) and not (own and _short(a.function) == "__post_init__"))
        and not (scopes is not None and scopes.in_handler(a.line))
    ]


def _in_case(scopes: FileScopes, line: int) -> bool:
    return any(sc.kind == ScopeKind.CASE for sc in scopes.around(line))


def _class_of(function: str | None) -> str:
    parts = (function or "").replace("::", ".").split(".")
    return parts[-2] if len(parts) > 1 else ""


def _derived_by(qualifier: str, callee: str, a: Assignment, s: Side, index: RepoIndex) -> Assignment | None:
    """A write of the same field by the function `qualifier.callee` that derives it from its input.

    `X.f(...)` is X's method or an inherited one; `self.f`/`cls.f` the method of the writer's class;
    a bare `f(...)` a function of the same file first. A qualifier the index cannot place says nothing."""
    owner, _ = index.owner_of(a)
    pool = index.writers_of(owner, a.field) if owner else []
    if not pool:
        pool = [
            w
            for w in index.writers(a.field)
            if _suffix(w.target) == _suffix(a.target) and "." in _suffix(a.target)
        ]
    found = [
        w
        for w in pool
        if _short(w.function) == callee and not _constant(w.value) and w.kind is not AssignKind.BINDING
        and not is_test_path(w.path) and not index.is_excluded(w.path)
    ]  # fmt: skip
    if qualifier in ("self", "cls", "this", "super()"):
        qualifier = _class_of(a.function)
    if qualifier:
        if not qualifier[0].isupper():
            return None  # a call on an object whose type is not known here
        classes = index.family(qualifier) | {qualifier}
        found = [w for w in found if _class_of(w.function) in classes]
    else:
        found = [w for w in found if w.path == s.path and not _class_of(w.function)]
    return min(found, key=lambda w: (w.path, w.line)) if found else None


def _calls(s: Side, a: Assignment, scopes: FileScopes | None) -> list[tuple[int, str, str]]:
    """(line, callee short name) of the earlier statements of `a`'s function that build or fill the
    object `a` writes into (`root = f(...)`, `f(root, ...)`, `root.f(...)`), stopping at a return."""
    if s.head is None:
        return []
    root = _root(a.target)
    out: list[tuple[int, str, str]] = []
    for c in s.head.clauses:
        if c.function != (a.function or "") or c.line >= a.line:
            continue
        if scopes is not None and not scopes.same_flow(root, c.line, a.line):
            continue  # another lambda, clause, or a local of the same name in another loop or block
        if c.kind is ClauseKind.RETURN and c.guards:
            out = []  # a conditional return: what came before may not reach the write
            continue
        text = c.text
        fills = re.match(rf"^{re.escape(root)}(?::[^=]+)?=(?!=)", text) or re.search(
            rf"\(\s*{re.escape(root)}\s*[,)]", text
        )
        if not fills and not text.startswith(f"{root}."):
            continue
        for m in _CALLEE.finditer(text):
            qualifier, _, name = m.group(1).rpartition(".")
            if name and not name[0].isupper() and name not in ("get", "copy", "deepcopy", "update"):
                out.append((c.line, qualifier.rsplit(".", 1)[-1], name))
    return out


def _leaves(statement: str, line: int, a: Assignment, scopes: FileScopes | None) -> bool:
    """Whether a `return` / `break` / `continue` on `line` can keep the flow from reaching `a`: a
    `break` or `continue` leaves only its loop, so it matters only when that loop holds `a` too."""
    if not statement.startswith(("break", "continue")) or scopes is None:
        return True
    loops = [sc for sc in scopes.around(line) if sc.kind == ScopeKind.LOOP]
    return bool(loops) and loops[-1].holds(a.line)


def _earlier(s: Side, a: Assignment, scopes: FileScopes | None) -> Assignment | None:
    """An earlier derived write of the same target in the same function and flow (no return in
    between, not in another lambda or `catch` clause, not a local of its own loop or block)."""
    if s.head_facts is None or s.head is None:
        return None
    root = _root(a.target)
    returns = [
        c.line
        for c in s.head.clauses
        if c.kind is ClauseKind.RETURN
        and c.function == (a.function or "")
        and _leaves(c.text, c.line, a, scopes)
    ]
    found = [
        w
        for w in s.head_facts.assignments
        if w.target == a.target and w.function == a.function and w.line < a.line and not _constant(w.value)
        and _same_variable(w, a)
        and not any(w.line < r < a.line for r in returns)
        and (scopes is None or scopes.same_flow(root, w.line, a.line))
        # a general default before a `switch`, then one arm's own value: the default still holds for
        # the other arms (a per-model override, `hparams.ffn_op = GELU; switch (proj) { case X: ... }`)
        and not (scopes is not None and _in_case(scopes, a.line) and not _in_case(scopes, w.line))
    ]  # fmt: skip
    last = max(found, key=lambda w: w.line) if found else None
    if last is None or _restores(s, a, last) or consumed(a, last, scopes):
        return None
    return last


def _same_variable(w: Assignment, a: Assignment) -> bool:
    """In Python a bare name is a local and `self.freed` the member: `freed = self.freed` then
    `self.freed = []` is a swap, not one target written twice. In C++ a bare name in a method may be
    the member itself (`this->x`)."""
    if a.lang is not Lang.PYTHON:
        return True
    return (w.receiver or "") == (a.receiver or "")


def _restores(s: Side, a: Assignment, last: Assignment) -> bool:
    """`a` puts back a value saved before `last` replaced it (`original = state.rank` ... `state.rank =
    expert_rank()` ... `finally: state.rank = original`): a save / override / restore, the override used
    in between, not a dead derivation."""
    saved = a.value.strip()
    if s.head_facts is None or not saved.isidentifier():
        return False
    return any(
        w.target == saved and w.function == a.function and w.line < last.line and w.value.strip() == a.target
        for w in s.head_facts.assignments
    )


def _written(a: Assignment, scopes: FileScopes | None) -> str:
    """The write as written in the source (`result->stage_status = grpc::Status(...)`), else its text."""
    if scopes is not None:
        return scopes.source(a.stmt_start or a.line, a.stmt_end).rstrip(";").strip()
    return a.text.rstrip(";").strip() or f"{a.target} = {a.value}"


def _call_overrides(s: Side, index: RepoIndex, scopes: FileScopes | None) -> list[Override]:
    out: list[Override] = []
    for a in _new_writes(s, scopes, own=True):
        written = _written(a, scopes)
        same = _earlier(s, a, scopes)
        if same is not None:
            out.append(
                Override(
                    OverrideKind.CALL,
                    s.path,
                    a.line,
                    a.target,
                    a.field,
                    a.value,
                    same,
                    callee=_short(a.function),
                    written=written,
                    other_written=_written(same, scopes),
                )
            )
            continue
        if a.receiver in ("self", "this"):
            continue  # the object the method runs on: no call before it built it
        for _, qualifier, callee in _calls(s, a, scopes):
            if callee == _short(a.function):
                continue
            if _short(a.function).startswith(callee + "_"):
                break  # a variant builder (`llama3_debugmodel_flex_attn` over `llama3_debugmodel`): its point
            w = _derived_by(qualifier, callee, a, s, index)
            if w is not None:
                out.append(
                    Override(
                        OverrideKind.CALL, s.path, a.line, a.target, a.field, a.value, w, callee=callee,
                        written=written,
                    )
                )  # fmt: skip
                break
    return out


def _env_of(w: Assignment, index: RepoIndex) -> str:
    """The environment variable a write takes its value (or its guard) from, directly or via a local
    of its function; "" when none."""
    facts = index.files.get(w.path)
    if facts is None:
        return ""
    words = set(re.findall(r"[A-Za-z_]\w*", f"{w.value} {w.guard_text}"))
    for e in sorted(facts.env_reads, key=lambda e: (e.line, e.name)):
        if e.function != w.function:
            continue
        if e.line == w.line or (e.target and e.target in words and e.line <= w.line):
            return e.name
    return ""


def _env_overrides(s: Side, index: RepoIndex, scopes: FileScopes | None) -> list[Override]:
    out: list[Override] = []
    for a in _new_writes(s, scopes):
        if not _constant(a.value) or not is_builder(a.function or ""):
            continue
        owner, _ = index.owner_of(a)
        if not owner:
            continue
        for w in index.writers_of(owner, a.field):
            if (
                w.receiver not in ("self", "this")
                or is_init_function(w.function)
                or is_builder(w.function or "")
            ):
                continue
            if is_test_path(w.path) or index.is_excluded(w.path):
                continue
            env = _env_of(w, index)
            if env:
                out.append(
                    Override(
                        OverrideKind.ENV, s.path, a.line, a.target, a.field, a.value, w, env=env,
                        written=_written(a, scopes),
                    )
                )  # fmt: skip
                break
    return out


def _edited(o: Override, s: Side) -> bool:
    """The write only renames what an override the base already made reads: a line the change removed
    wrote the same target, unconditionally, in the same function, a value differing only in renamed
    operands (`max(self.sliding_window, 8192)` -> `max(self.sliding_window_size, 8192)`). The override is
    not this change's; a new value for it (`self.sliding_window` -> `max(self.sliding_window, 8192)`) is."""
    if s.base_facts is None or s.head_facts is None:
        return False
    writes = [a for a in s.head_facts.assignments if a.line == o.line and a.target == o.target]
    return any(
        b.line in s.removed and b.target == o.target and b.guard is None and b.function == a.function
        and renamed_operands(b.value, a.value)
        for a in writes
        for b in s.base_facts.assignments
    )  # fmt: skip


def overrides(
    sides: list[Side], index: RepoIndex, scopes: Mapping[str, FileScopes | None] | None = None
) -> list[Override]:
    """Every new write that makes a derivation dead or is undone later, by path and line. `scopes`:
    the loops, clauses and lambdas of the changed files (`write_scopes.file_scopes`), by head path."""
    out: list[Override] = []
    for s in sides:
        here = (scopes or {}).get(s.path)
        found = [*_call_overrides(s, index, here), *_env_overrides(s, index, here)]
        out.extend(o for o in found if not _edited(o, s))
    unique = {(o.path, o.line, o.field): o for o in out}
    return [unique[k] for k in sorted(unique)]
