"""How far a guarded rule reaches: which configurations make its guard true.

From field defaults (C++ member initialisers, enum first members, Python class defaults) and from where
the guard's atoms are derived (`use_kvcache = task_type == TaskType.LANGUAGE_MODEL`), say in words which
configurations the rule fires for, and list the model config builders in the repository that reach it.
Pure: everything comes from the RepoIndex.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reviewbot.lang.facts import Assignment
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.predicate import And, Atom, Not, Pred, canonical_operand

__all__ = ["AtomReach", "Reach", "describe_reach"]

_CMP = re.compile(r"^(?P<left>.+?)\s*(?P<op>==|!=)\s*(?P<right>.+)$")
_BUILDER = re.compile(r"(create|build|make)_?config", re.IGNORECASE)


@dataclass(frozen=True)
class AtomReach:
    atom: str  # as written in the guard (canonical)
    field: str  # the configuration field the atom tests
    true_at_default: bool | None  # None: no default found
    default: str = ""  # e.g. "`RopeConfig.style` defaults to `RopeStyle.No` (RopeConfig.h:16)"
    derived: str = ""  # e.g. "`use_kvcache` is `task_type == TaskType.LANGUAGE_MODEL` (model_config.py:23)"
    population: str = ""  # e.g. "every task_type other than LANGUAGE_MODEL (DENSE_EMBEDDING, ...)"
    display: str = ""  # the field with its owner, e.g. `rope_config.style`


@dataclass(frozen=True)
class Reach:
    sentence: str
    atoms: tuple[AtomReach, ...]
    fires_at_default: bool | None  # True when every atom is true at its default
    models: tuple[str, ...] = ()  # `Bert._create_config (rtp_llm/models/bert.py:7)`
    wide: bool = False  # fires for a whole population (a derived atom) or at defaults
    places: tuple[str, ...] = field(default=())


def _is_enum_ref(text: str) -> bool:
    head = text.split(".", 1)[0]
    return "." in text and head[:1].isupper()


def _leaf(text: str) -> str:
    return text.rsplit(".", 1)[-1]


def _literal_atoms(guard: Pred) -> list[tuple[Atom, bool]]:
    """Atoms of a conjunction with the truth value the guard needs (`!x` needs x false)."""
    parts = guard.args if isinstance(guard, And) else (guard,)
    out: list[tuple[Atom, bool]] = []
    for p in parts:
        if isinstance(p, Atom):
            out.append((p, True))
        elif isinstance(p, Not) and isinstance(p.arg, Atom):
            out.append((p.arg, False))
    return out


def _default_of(index: RepoIndex, fld: str) -> tuple[str, str] | None:
    for d in sorted(index.defaults(fld), key=lambda d: (d.lang.value, d.path, d.line)):
        return d.value, f"`{d.owner}.{d.field}` defaults to `{d.value}` ({d.path}:{d.line})"
    return None


def _derivation_of(index: RepoIndex, fld: str) -> Assignment | None:
    """A write of `fld` whose value is a comparison (the atom is derived from another field)."""
    for a in sorted(index.writers(fld), key=lambda a: (a.path, a.line)):
        if is_test_path(a.path) or a.guard is not None:
            continue
        if _CMP.match(a.value):
            return a
    return None


def _population(index: RepoIndex, derived: Assignment, want_true: bool) -> str:
    m = _CMP.match(derived.value)
    if not m:
        return ""
    left, op, right = (canonical_operand(m.group(g)) for g in ("left", "op", "right"))
    enum_side, field_side = (left, right) if _is_enum_ref(left) else (right, left)
    if not _is_enum_ref(enum_side):
        return ""
    equal_means_true = op == "=="
    enum_name, member = enum_side.rsplit(".", 1)
    members = index.enum_members(_leaf(enum_name))
    others = [m_ for m_ in members if m_ != member]
    if want_true == equal_means_true:
        return f"{_leaf(field_side)} == {member}"
    listed = f" ({', '.join(others)})" if others else ""
    return f"every {_leaf(field_side)} other than {member}{listed}"


def _atom_reach(index: RepoIndex, atom: Atom, want: bool) -> AtomReach:
    m = _CMP.match(atom.text)
    if m:
        left, op, right = m.group("left"), m.group("op"), m.group("right")
        enum_side, field_side = (left, right) if _is_enum_ref(left) else (right, left)
        fld = _leaf(field_side)
        found = _default_of(index, fld)
        if found is None or not _is_enum_ref(enum_side):
            return AtomReach(atom.text, fld, None)
        value, where = found
        equal = _leaf(value) == _leaf(enum_side)
        holds = equal if op == "==" else not equal
        display = ".".join(field_side.split(".")[-2:])
        return AtomReach(atom.text, fld, holds == want, default=where, display=display)
    fld = _leaf(atom.text)
    found = _default_of(index, fld)
    true_at_default: bool | None = None
    where = ""
    if found is not None:
        value, where = found
        if value in ("True", "False"):
            true_at_default = (value == "True") == want
    derived = _derivation_of(index, fld)
    if derived is None:
        return AtomReach(atom.text, fld, true_at_default, default=where)
    population = _population(index, derived, want)
    return AtomReach(
        atom.text,
        fld,
        true_at_default,
        default=where,
        derived=f"`{fld}` is `{derived.value}` ({derived.path}:{derived.line})",
        population=population,
    )


def _models(index: RepoIndex, atoms: list[AtomReach]) -> list[str]:
    """Config builders that leave every enum-compared field at a default that satisfies the guard."""
    enum_fields = {a.field for a in atoms if a.default and not a.derived and a.true_at_default}
    builders: dict[tuple[str, str], list[Assignment]] = {}
    for facts in index.files.values():
        if is_test_path(facts.path):
            continue
        for fn in facts.functions:
            if _BUILDER.search(fn.name.replace("::", ".").rsplit(".", 1)[-1]):
                builders[(facts.path, fn.name)] = [a for a in facts.assignments if a.function == fn.name]
    out: list[str] = []
    for (path, name), writes in sorted(builders.items()):
        overridden = [w for w in writes if w.field in enum_fields]
        if any(not _is_default_value(index, w) for w in overridden):
            continue
        owner = name.replace("::", ".").rsplit(".", 1)[0]
        line = min((w.line for w in writes), default=0)
        out.append(f"{owner} ({path}:{line})" if line else f"{owner} ({path})")
    return out


def _is_default_value(index: RepoIndex, write: Assignment) -> bool:
    found = _default_of(index, write.field)
    return found is not None and _leaf(found[0]) == _leaf(write.value)


def describe_reach(guard: Pred | None, index: RepoIndex) -> Reach | None:
    if guard is None:
        return None
    atoms = [_atom_reach(index, a, want) for a, want in _literal_atoms(guard)]
    if not atoms:
        return None
    clauses: list[str] = []
    for a in atoms:
        if a.population:
            clauses.append(a.population)
        elif a.default and a.true_at_default:
            clauses.append(f"whose {a.display or a.field} is left at its default")
        elif a.default:
            clauses.append(f"that set {a.display or a.field} away from its default")
    known = [a.true_at_default for a in atoms]
    fires_at_default = None if None in known else all(k for k in known)
    models = _models(index, atoms)
    wide = any(a.population.startswith("every") for a in atoms) or bool(fires_at_default)
    sentence = ""
    if clauses:
        # "every task_type other than LANGUAGE_MODEL (...) whose style is left at its default"
        every = [c for c in clauses if c.startswith("every")]
        relative = [c for c in clauses if c.startswith(("whose", "that"))]
        other = [c for c in clauses if c not in every and c not in relative]
        sentence = "The rule fires for " + (every[0] if every else "every configuration")
        if relative:
            sentence += " " + " and ".join(relative)
        extras = every[1:] + [f"with {c}" for c in other]
        if extras:
            sentence += ", " + " and ".join(extras)
        sentence += "."
    if models:
        sentence += f" Model configs that reach it: {', '.join(models)}."
    return Reach(sentence.strip(), tuple(atoms), fires_at_default, tuple(models), wide)
