"""Defaults that code picks rather than declares (pure): the value a derivation chooses for a field
nobody set, and a module constant that an environment read with another default replaced.

- `auto_changes`: a constant written, on a line the change added, under a condition that tests the
  field is still at its default (`if self.x is None: ... elif is_blackwell(): self.x = "trtllm_mha"`,
  `if not self.flag and arch in (...): self.flag = True`, `if (x == 0) x = 128;`): every deployment
  that never sets the field and meets the condition gets the new value. Not for brand-new fields, nor
  for a write of the value the test compares with (`if x is None or x == NONE: x = NONE`: the unset
  spelling normalised), nor for the field's base default picked when it is now left unset (`page_size: int = 1` became
  `Optional[int] = None` with `if self.page_size is None: self.page_size = 1`): nothing changes.
- `constant_to_env`: `SIZE = 256 * 1024 * 1024` removed and a use of it replaced by `envs.X_SIZE` whose
  default, read where the variable is defined (`int(os.getenv("X_SIZE", str(394 * 1024 * 1024)))`),
  differs; one change per replaced use. The same value, now configurable, is not a change.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from reviewbot.analysis.defaults.records import DefaultChange, DefaultKind
from reviewbot.analysis.derive import derivation_writes
from reviewbot.analysis.envs.parse import Outcome, Result, evaluate, same_literal, value_of_default
from reviewbot.analysis.envs.switches import unset_value
from reviewbot.analysis.scope import in_config_scope
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import ClauseKind
from reviewbot.lang.facts import Assignment, EnvRead
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.owners import is_constant_value
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred

__all__ = ["auto_changes", "constant_to_env"]


def _unset_test(atom: str, negated: bool, field: str, defaults: list[str]) -> bool:
    """`x is None`, `None == x`, `not x`, `x == "auto"`, `x == 0` where 0 is its default: a test that the
    field was left at its default."""
    t, f = atom.replace(" ", ""), re.escape(field)
    if negated:
        return re.fullmatch(rf"(?:\w+\.)*{f}", t) is not None
    m = re.fullmatch(rf"(?:(?P<lhs>[^=<>!]+)==)?(?:\w+\.)*{f}(?:==(?P<rhs>.+)|(?P<none>isNone))?", t)
    if m is None or t == field or t.endswith("." + field):
        return False
    if m.group("none"):
        return True
    value = m.group("lhs") or m.group("rhs") or ""
    return value in ("None", '"auto"', "'auto'", '""', "''") or any(same_literal(value, d) for d in defaults)


def _picks_when_unset(a: Assignment, defaults: list[str]) -> bool:
    """Every test of the field in the write's guard asks whether it was left at its default, and the
    write stores something else than what a test compares it with (`if x is None or x == NONE:
    x = NONE` normalises the unset spelling: it picks nothing)."""
    assert a.guard is not None
    tests = [(t, neg) for t, neg in _literals(a.guard) if re.search(rf"\b{re.escape(a.field)}\b", t)]
    if not tests or not all(_unset_test(t, neg, a.field, defaults) for t, neg in tests):
        return False
    return not any(_compared_with(t, a.value) for t, neg in tests if not neg)


def _compared_with(atom: str, value: str) -> bool:
    """The test compares the field with the value the write stores (`x == CUDAGraphMode.NONE`)."""
    sides = atom.replace(" ", "").split("==")
    return len(sides) == 2 and any(same_literal(side, value.replace(" ", "")) for side in sides)


def _literals(pred: Pred, negated: bool = False) -> list[tuple[str, bool]]:
    """The atoms of a predicate with their polarity (`not x` -> (`x`, True))."""
    if isinstance(pred, Atom):
        return [(pred.text, negated)]
    if isinstance(pred, Not):
        return _literals(pred.arg, not negated)
    if isinstance(pred, And | Or):
        return [lit for arg in pred.args for lit in _literals(arg, negated)]
    return []


def _base_defaults(field: str, sides: list[Side], index: RepoIndex) -> list[str] | None:
    """The field's defaults at base (None: the field did not exist, nothing to flip): the changed files'
    base declarations, else the head index's declarations in files the change did not touch."""
    changed = {s.path for s in sides} | {s.old_path for s in sides}
    found = [
        d.value for s in sides if s.base_facts is not None for d in s.base_facts.defaults if d.field == field
    ] + [
        d.default or "None" for s in sides if s.base_facts is not None for d in s.base_facts.fields if d.field == field
    ]  # fmt: skip
    found += [d.value for d in index.defaults(field) if d.path not in changed]
    return sorted(set(found)) if found else None


def auto_changes(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    """A constant a derivation now picks for a field nobody set (`if self.x is None: ... elif cond:
    self.x = "new"`, `if not self.flag and arch in (...): self.flag = True`, `if (x == 0) x = 128;`):
    the field's effective default for every deployment that meets the condition."""
    out: list[DefaultChange] = []
    for s in sides:
        if s.head_facts is None or s.base_facts is None:
            continue
        before = {
            (a.function, a.field, a.value, a.guard.key if a.guard else "") for a in s.base_facts.assignments
        }
        derived = {(d.via_line or d.line, d.field) for d, _ in derivation_writes(s.head_facts)}
        for a in s.head_facts.assignments:
            if a.line not in s.added or a.guard is None or not a.checks_target_first:
                continue
            if (a.line, a.field) not in derived or not is_constant_value(a.value):
                continue
            if not in_config_scope(s.path, a.function, a.target, a.owner):
                continue  # runtime state picked when unset (a context's `has_evaluated_once`): no setting
            defaults = _base_defaults(a.field, sides, index)
            if defaults is None:
                continue  # a brand-new field: nothing to flip
            if not _picks_when_unset(a, defaults) or (a.function, a.field, a.value, a.guard.key) in before:
                continue
            if any(same_literal(a.value, d) for d in _own_base_defaults(a, s)):
                continue  # the field's base default, now picked when unset: those deployments keep it
            out.append(
                DefaultChange(DefaultKind.AUTO, f"{_owner_name(a)}.{a.field}", a.field, _owner_name(a),
                              defaults[0], a.value, s.path, a.line, s.old_path, a.line, condition=a.guard_text)
            )  # fmt: skip
    return out


def _own_base_defaults(a: Assignment, s: Side) -> list[str]:
    """The base defaults of the field of this owner, in this file (another class's field of the same
    name says nothing of this one)."""
    if s.base_facts is None:
        return []
    owner = _owner_name(a)
    found = [
        d.value for d in s.base_facts.defaults if d.field == a.field and d.owner.rsplit(".", 1)[-1] == owner
    ]
    found += [
        d.default or "None"
        for d in s.base_facts.fields
        if d.field == a.field and d.owner.rsplit(".", 1)[-1] == owner
    ]
    return found


def _owner_name(a: Assignment) -> str:
    parts = (a.function or "").replace("::", ".").split(".")
    return a.owner.rsplit(".", 1)[-1] if a.owner else (parts[-2] if len(parts) >= 2 else "")


_CONSTANT_NAME = re.compile(r"^([A-Z][A-Z0-9_]*)=(.+)$")


def _module_constants(s: Side) -> dict[str, str]:
    """Module-level constants the change removed (`FLASHINFER_WORKSPACE_SIZE = 256 * 1024 * 1024`)."""
    out: dict[str, str] = {}
    for c in s.base.clauses if s.base is not None else ():
        m = _CONSTANT_NAME.match(c.text)
        if c.function or c.kind is not ClauseKind.ASSIGN or c.line not in s.removed or m is None:
            continue
        if value_of_default(m.group(2)).outcome is Outcome.VALUE:
            out[m.group(1)] = m.group(2)
    return out


def _unset(e: EnvRead, index: RepoIndex) -> Result:
    """What a read gives when the variable is unset; a read without a default of its own (`envs.X`)
    takes the default of the variable's defining read (`int(os.getenv("X", "394"))` in `envs.py`)."""
    if e.default is not None:
        return unset_value(e)
    defining = {(r.default, r.parse) for r in index.env_reads(e.name) if r.default is not None}
    if len(defining) != 1:
        return Result(Outcome.UNKNOWN)
    default, parse = next(iter(defining))
    base = value_of_default(default)
    return evaluate(parse, base.value) if parse and base.outcome is Outcome.VALUE else base


def constant_to_env(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    """`SIZE = 256 MiB` removed and its use replaced by `envs.SIZE_ENV` whose default is 394 MiB: every
    deployment that never sets the variable gets another value than the constant it had."""
    out: list[DefaultChange] = []
    for s in sides:
        constants = _module_constants(s)
        if not constants or s.head_facts is None:
            continue
        for e in sorted(s.head_facts.env_reads, key=lambda e: (e.line, e.name)):
            if e.line not in s.added:
                continue
            hunk = next(
                (h for h in s.hunks if h.target_start <= e.line < h.target_start + h.target_length), None
            )
            if hunk is None:
                continue
            # The removed use the read replaced: a removed line (not a definition) that reads a constant,
            # nearest to the read's place in the hunk, and that says what the read's line says with the
            # constant where the read is (`torch.empty(SIZE, ...)` -> `torch.empty(envs.SIZE, ...)`): a
            # constant deleted with the code that used it is not what a new switch further down replaced.
            at = e.line - hunk.target_start
            added = dict(hunk.added).get(e.line, "")
            uses = sorted(
                (abs((n - hunk.source_start) - at), n, name)
                for n, t in hunk.removed
                if not _CONSTANT_NAME.match("".join(t.split()))
                for name in constants
                if re.search(rf"(?<![\w.]){name}(?!\w)", t) and _same_use(t, name, added, e)
            )
            if not uses:
                continue
            names = [uses[0][2]]
            old, new = value_of_default(constants[names[0]]), _unset(e, index)
            if old.outcome is not Outcome.VALUE or new.outcome is not Outcome.VALUE:
                continue
            if str(old.value) == str(new.value):
                continue  # the same value, now configurable
            out.append(
                DefaultChange(DefaultKind.CONSTANT, e.name, e.name, "", f"{names[0]} = {constants[names[0]]}",
                              str(new.value), s.path, e.line, s.old_path, _line_of(s, names[0]),
                              old_effective=str(old.value), new_effective=str(new.value))
            )  # fmt: skip
    return out


def _same_use(removed: str, constant: str, added: str, e: EnvRead) -> bool:
    """The removed line with the constant and the added line with the read are one statement: equal but
    for those two, to a ratio of 0.6 (spacing ignored)."""
    name = re.escape(e.name)
    # the read as written: a call naming the variable (`os.getenv("X", "0")`) or a registry member (`envs.X`)
    read = re.compile(rf"[\w.]+\(\s*[\"']{name}[\"'][^)]*\)|(?<![\w])(?:[A-Za-z_]\w*\.)*{name}(?!\w)")
    after, n = read.subn("\u00b7", " ".join(added.split()))
    if not n:
        return False
    before = re.sub(rf"(?<![\w.]){re.escape(constant)}(?!\w)", "\u00b7", " ".join(removed.split()))
    return SequenceMatcher(None, before, after).ratio() >= 0.6


def _line_of(s: Side, name: str) -> int:
    for c in s.base.clauses if s.base is not None else ():
        if not c.function and c.text.startswith(name + "="):
            return c.line
    return 0
