"""How far a guarded rule reaches: which configurations make its guard true.

From field defaults (C++ member initialisers, enum first members, Python class defaults) and from where
the guard's atoms are derived (`use_kvcache = task_type == TaskType.LANGUAGE_MODEL`), say in words which
configurations the rule fires for, and list the model config builders in the repository that reach it:
those that set the guard's enum/bool fields to values that satisfy it or leave them at a satisfying
default. For atoms derived from another field, each builder's own setting of that field is noted.
Pure: everything comes from the RepoIndex.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from reviewbot.analysis import operands as ops
from reviewbot.analysis.operands import guard_fields
from reviewbot.analysis.reach.builders import config_builders
from reviewbot.analysis.reach.records import AtomReach, ModelReach, Reach
from reviewbot.lang.facts import Assignment, Function
from reviewbot.lang.follow import followed
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import Atom, Pred, literals
from reviewbot.model.messages import Message, listing, msg

__all__ = ["AtomReach", "ModelReach", "Reach", "describe_reach", "guard_fields", "BUILDER_NAMES"]

# Names of config builders by the convention `lang.builders.is_builder` matches; the index must parse these
# functions (see pipeline.interesting_names) so that a builder's settings are known even when it never mentions
# the guard's fields.
BUILDER_NAMES = ("_create_config", "create_config", "build_config", "_build_config", "make_config")
NAMED_MODELS = 5  # model configs the sentence names; the rest are counted
T = TypeVar("T")


def _atom_reach(index: RepoIndex, atom: Atom, want: bool) -> AtomReach:
    split = ops.split(atom.text)
    if split is not None:
        field_side, op, _enum, member = split
        fld = ops.leaf(field_side)
        display = ".".join(field_side.split(".")[-2:])
        found = ops.default_of(index, fld)
        if found is None:
            return AtomReach(atom.text, fld, None, display=display, want=want)
        value, said = found
        holds = ops.holds(op, member, value) if ops.is_enum_ref(value) else None
        return AtomReach(
            atom.text,
            fld,
            None if holds is None else holds == want,
            default=str(said),
            display=display,
            want=want,
            default_value=value,
            default_msg=said,
        )
    fld = ops.leaf(atom.text)
    found = ops.default_of(index, fld)
    true_at_default: bool | None = None
    value = ""
    where: Message | str = ""
    if found is not None:
        value, where = found
        if value in ("True", "False"):
            true_at_default = (value == "True") == want
    derived = ops.derivation_of(index, fld)
    if derived is None:
        return AtomReach(
            atom.text,
            fld,
            true_at_default,
            default=str(where),
            want=want,
            default_value=value,
            default_msg=where,
        )
    population, source = "", ""
    population_msg: Message | str = ""
    population_bare: Message | str = ""
    members: tuple[str, ...] = ()
    dsplit = ops.split(derived.value)
    if dsplit is not None:
        source_side, op, enum_side, member = dsplit
        source = ops.leaf(source_side)
        enum_members = index.enum_members(ops.leaf(enum_side.rsplit(".", 1)[0]))
        members = tuple(m for m in enum_members if ops.holds(op, member, m) == want)
        if (op == "==") == want:
            population = population_msg = population_bare = f"{source} == {member}"
        else:
            others = [m for m in enum_members if m != member]
            listed: Message | str = msg("reach.listed", members=others) if others else ""
            population_msg = msg("reach.every-other", source=source, member=member, listed=listed)
            population_bare = msg("reach.every-other", source=source, member=member, listed="")
            population = str(population_msg)
    derived_msg = msg("reach.derived", field=fld, value=derived.value, place=f"{derived.path}:{derived.line}")
    return AtomReach(
        atom.text,
        fld,
        true_at_default,
        default=str(where),
        derived=str(derived_msg),
        population=population,
        want=want,
        members=members,
        source=source,
        default_value=value,
        default_msg=where,
        derived_msg=derived_msg,
        population_msg=population_msg,
        population_bare=population_bare,
    )


# Several checks ask the same index for the same reach: memoise per index (by identity, dropped with it).
_MEMO: dict[int, tuple[weakref.ref[RepoIndex], tuple[int, bool], dict[Any, Any]]] = {}


def _memo(index: RepoIndex) -> dict[Any, Any]:
    """A dict for results computed from `index`, kept while the index lives and as it is (by identity,
    emptied when files or the followed graph are added)."""
    # The index grows while it is built, and the builders' helper calls arrive with the followed graph.
    key, stamp = id(index), (len(index.files), followed(index) is not None)
    entry = _MEMO.get(key)
    if entry is not None and entry[0]() is index and entry[1] == stamp:
        return entry[2]
    memo: dict[Any, Any] = {}

    def forget(_ref: weakref.ref[RepoIndex]) -> None:
        _MEMO.pop(key, None)

    _MEMO[key] = (weakref.ref(index, forget), stamp, memo)
    return memo


def shared(name: str, index: RepoIndex, of: tuple[object, ...], compute: Callable[[], T]) -> T:
    """`compute()`, once per `index` and the objects `of` (by identity, kept alive with the answer): an
    analysis that several rules ask of the same derivation or sides of the change."""
    memo = _memo(index)
    key = (name, *(id(o) for o in of))
    kept = memo.get(key)
    if kept is None or any(a is not b for a, b in zip(kept[0], of, strict=True)):
        kept = memo[key] = (of, compute())
    found: T = kept[1]
    return found


def _builders(index: RepoIndex) -> list[tuple[Function, list[Assignment]]]:
    memo = _memo(index)
    if "builders" not in memo:
        memo["builders"] = config_builders(index)
    found: list[tuple[Function, list[Assignment]]] = memo["builders"]
    return found


def _last_write(writes: list[Assignment], fld: str) -> Assignment | None:
    """The last unconditional write of `fld` (writes are in the order they happen)."""
    found = [w for w in writes if w.field == fld and w.guard is None]
    return found[-1] if found else None


def _member(index: RepoIndex, enum_operand: str, value: str) -> str | None:
    """The enum member a written value names: `RopeStyle.Base` -> `Base`; an integer literal is the
    member at that position (`1` -> `Base` of `enum class RopeStyle { No = 0, Base = 1, ... }`:
    members are taken as numbered from 0 in declaration order, as the C++ and Python defaults do)."""
    if ops.is_enum_ref(value):
        return ops.leaf(value)
    if value.isdigit():
        members = index.enum_members(ops.leaf(enum_operand.rsplit(".", 1)[0]))
        n = int(value)
        return members[n] if n < len(members) else None
    return None


def _judge(
    index: RepoIndex, a: AtomReach, writes: list[Assignment]
) -> tuple[bool | None, Message | str, bool]:
    """(does the builder satisfy the atom, a note, is the note about a derived source)."""
    if a.source:
        w = _last_write(writes, a.source)
        if w is None:
            # The builder leaves the source (`task_type`) to whoever serves the model.
            return (None if a.members else a.true_at_default), "", True
        if ops.is_enum_ref(w.value):
            member = ops.leaf(w.value)
            return member in a.members, f"{a.source} {member}", True
        return None, msg("reach.note.from", name=a.source, value=w.value), True
    w = _last_write(writes, a.field)
    if w is None:
        return a.true_at_default, "", False
    name = a.display or a.field
    ok = _satisfies(index, a, w.value)
    if ok is False:
        # A later write under a condition may still set a value that satisfies the guard.
        later = writes[writes.index(w) + 1 :]
        for g in later:
            if g.field == a.field and g.guard is not None and _satisfies(index, a, g.value):
                return None, msg("reach.note.sets-under", name=name, value=_shown(index, a, g.value)), False
    if ok is None:
        return None, msg("reach.note.from", name=name, value=w.value), False
    return ok, msg("reach.note.sets", name=name, value=_shown(index, a, w.value)), False


def _satisfies(index: RepoIndex, a: AtomReach, value: str) -> bool | None:
    """Does writing `value` to the atom's field make the atom what the guard needs (None: unknown)?"""
    split = ops.split(a.atom)
    member = _member(index, split[2], value) if split is not None else None
    if split is not None and member is not None:
        return ops.holds(split[1], split[3], member) == a.want
    if value in ("True", "False"):
        return (value == "True") == a.want
    return None


def _shown(index: RepoIndex, a: AtomReach, value: str) -> str:
    """`RopeStyle.Base` as written, an integer with the member it stands for: `1 (Base)`."""
    split = ops.split(a.atom)
    member = _member(index, split[2], value) if split is not None else None
    return f"{value} ({member})" if member is not None and not ops.is_enum_ref(value) else value


def _models(index: RepoIndex, atoms: list[AtomReach]) -> list[ModelReach]:
    out: list[ModelReach] = []
    for fn, writes in _builders(index):
        reaches: bool | None = True
        notes: list[Message | str] = []
        excluded = False
        for a in atoms:
            ok, note, derived = _judge(index, a, writes)
            if ok is False and not derived:
                excluded = True
                notes = [note] if note else []
                break
            if ok is False:
                reaches = False
                notes.append(
                    msg("reach.note.as-built", note=note, source=a.source)
                    if note
                    else msg("reach.note.as-built-bare", source=a.source)
                )
            elif ok is None:
                reaches = None if reaches is not False else reaches
                if note:
                    notes.append(note)
            elif note:
                notes.append(note)
        owner = fn.name.replace("::", ".").rsplit(".", 1)[0]
        out.append(
            ModelReach(
                owner,
                fn.path,
                fn.start_line,
                False if excluded else reaches,
                tuple(str(n) for n in notes),
                excluded,
                fn.name,
                tuple(writes),
                tuple(notes),
            )
        )
    return out


def _clause(a: AtomReach) -> Message | str:
    if a.population:
        return a.population_msg or a.population
    name = a.display or a.field
    value = f" `{ops.leaf(a.default_value)}`" if a.default_value else ""
    split = ops.split(a.atom)
    if a.default and a.true_at_default:
        if split is not None and (split[1] == "==") == a.want:
            return msg("reach.left-default-or", name=name, value=value, member=split[3])
        return msg("reach.left-default", name=name, value=value)
    if a.default:
        return msg("reach.away-default", name=name, value=value)
    return ""


def _named(models: list[ModelReach]) -> Message | tuple[object, ...]:
    """The first `NAMED_MODELS` models described, and a count of the rest."""
    return listing([m.describe_msg() for m in models], NAMED_MODELS)


def _and(parts: list[Message | str]) -> Message | str:
    return parts[0] if len(parts) == 1 else msg("reach.and", first=parts[0], second=_and(parts[1:]))


def describe_reach(guard: Pred | None, index: RepoIndex) -> Reach | None:
    """The configurations `guard` is true for, in words, and the model config builders that reach it."""
    if guard is None:
        return None
    memo = _memo(index)
    if guard not in memo:
        memo[guard] = _describe(guard, index)
    found: Reach | None = memo[guard]
    return found


def _describe(guard: Pred, index: RepoIndex) -> Reach | None:
    atoms = [_atom_reach(index, a, want) for a, want in literals(guard)]
    if not atoms:
        return None
    said = [c for c in (_clause(a) for a in atoms) if c]
    known = [a.true_at_default for a in atoms]
    fires_at_default = None if None in known else all(k for k in known)
    builders = _models(index, atoms)
    kept, excluded = _ranked(builders)
    wide = any(a.population.startswith("every") for a in atoms) or bool(fires_at_default)
    population = _population(said)
    text = _sentences(population, kept, excluded)
    return Reach(
        str(text),
        tuple(atoms),
        fires_at_default,
        tuple(m.describe() for m in kept),
        wide,
        tuple(f"{m.path}:{m.line}" for m in kept),
        str(population),
        tuple(builders),
        text,
        population,
    )


def _ranked(builders: list[ModelReach]) -> tuple[list[ModelReach], list[ModelReach]]:
    """The builders not excluded, ranked; and the excluded ones, by place."""
    # Builders that reach it as built first, then those that depend on input, then the rest; within
    # each, those whose own settings say so (a note) before those that leave everything at defaults.
    kept = sorted(
        (m for m in builders if not m.excluded),
        key=lambda m: ({True: 0, None: 1, False: 2}[m.reaches], not m.notes, m.path, m.line, m.name),
    )
    excluded = sorted((m for m in builders if m.excluded), key=lambda m: (m.path, m.line, m.name))
    return kept, excluded


def _population(said: list[Message | str]) -> Message | str:
    """The configurations the atoms' clauses describe, as one phrase ("" without a clause)."""
    population: Message | str = ""
    if said:
        # "every task_type other than LANGUAGE_MODEL (...) whose style is left at its default `No`"
        # (sorted by the English wording, which says what kind of clause each is)
        every = [c for c in said if str(c).startswith("every")]
        relative = [c for c in said if str(c).startswith(("whose", "that"))]
        other = [c for c in said if c not in every and c not in relative]
        population = every[0] if every else msg("reach.every-configuration")
        if relative:
            population = msg("reach.relative", head=population, relative=_and(relative))
        extras = every[1:] + [msg("reach.with", clause=c) for c in other]
        if extras:
            population = msg("reach.extras", head=population, extras=_and(extras))
    return population


def _sentences(
    population: Message | str, kept: list[ModelReach], excluded: list[ModelReach]
) -> Message | str:
    """Who the rule fires for, the builders that reach it and those that do not, chained."""
    sentences: list[Message] = []
    if population:
        sentences.append(msg("reach.fires", population=population))
    if kept:
        sentences.append(msg("reach.reached-by", models=_named(kept)))
    if excluded:
        sentences.append(msg("reach.not-reached-by", models=_named(excluded)))
    text: Message | str = ""
    for one in reversed(sentences):
        text = msg("reach.sentences", first=one, rest=text) if text else one
    return text
