"""The records `lang.clauses` produces, and the conjuncts (atoms) of a guard.

A statement (`Clause`) with the conditions it runs under (`Guard`), an option default (`OptionDefault`),
and the `Clauses` of one file, with `atoms` / `written_atoms` that split a guard into the conjuncts it
requires. They live apart from the tree walk that builds them so that reading a clause (its kind, its
guards' atoms) never needs the parser, and so that the walk in `lang.clauses` and the option-default
extraction in `lang.option_defaults` share them without importing each other. `lang.clauses` re-exports
every name here: its callers know them as `lang.clauses.X`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.facts import Lang

__all__ = [
    "ClauseKind",
    "Guard",
    "Clause",
    "OptionKind",
    "OptionDefault",
    "Clauses",
    "atoms",
    "written_atoms",
]


class ClauseKind(str, Enum):
    ASSIGN = "assign"  # `x = v`, `x += v`, `T x = v;`
    ENV_WRITE = "env-write"  # `os.environ["X"] = v`, `setenv("X", v, 1)`: see `Clause.env_name`
    CALL = "call"  # a call for its effect
    RAISE = "raise"  # `raise ...`, `throw ...;`
    RETURN = "return"  # `return ...`, `continue`, `break`
    CHECK = "check"  # `assert cond`, `assert(cond)`, `FT_CHECK(cond)`, `TORCH_CHECK(cond, ...)`
    OTHER = "other"

    @property
    def validates(self) -> bool:
        """A statement that rejects a configuration: a raise, a throw, an assertion or a check macro."""
        return self in (ClauseKind.RAISE, ClauseKind.CHECK)


@dataclass(frozen=True)
class Guard:
    """One condition a statement runs under; `negated` for the else side of it."""

    text: str  # canonical condition, without the outer parentheses
    negated: bool
    line: int
    written: str = ""  # as written (one line, outer parentheses dropped), for messages

    @property
    def shown(self) -> str:
        body = self.written or self.text
        return f"not ({body})" if self.negated else body

    @property
    def spelled(self) -> str:
        return f"not ({self.text})" if self.negated else self.text


@dataclass(frozen=True)
class Clause:
    kind: ClauseKind
    text: str  # canonical statement text
    line: int
    end_line: int
    guards: tuple[Guard, ...] = ()  # outermost first
    function: str = ""  # `Class.method` / `Class::method`; "" at module or namespace level
    env_name: str = ""  # ENV_WRITE: the variable written
    env_sources: tuple[str, ...] = ()  # environment variables the statement reads (`os.environ.get("OLD")`)

    @property
    def guard_atoms(self) -> frozenset[str]:
        return frozenset(a for g in self.guards for a in atoms(g))


class OptionKind(str, Enum):
    ARGUMENT = "argument"  # `parser.add_argument("--x", default=...)`
    PARAMETER = "parameter"  # a function parameter's default


@dataclass(frozen=True)
class OptionDefault:
    kind: OptionKind
    name: str  # the option's destination (`--max-len` -> `max_len`) or the parameter's name
    default: str  # canonical
    function: str  # `Class.method` / `Class::method` (the enclosing one for an argument)
    line: int


@dataclass(frozen=True)
class Clauses:
    path: str
    lang: Lang
    clauses: tuple[Clause, ...] = ()
    options: tuple[OptionDefault, ...] = ()


_TOP_AND = re.compile(r"\s*(?<![\w.])and(?![\w])\s*|\s*&&\s*")


def _conjuncts(t: str) -> list[str]:
    depth, start, out = 0, 0, []
    for m in _TOP_AND.finditer(t):
        depth = sum(1 if c in "([{" else -1 if c in ")]}" else 0 for c in t[: m.start()])
        if depth == 0:
            out.append(t[start : m.start()])
            start = m.end()
    out.append(t[start:])
    return [a.strip() for a in out if a.strip()]


def atoms(guard: Guard) -> tuple[str, ...]:
    """The conjuncts a guard requires: `a and b` -> (`a`, `b`); a negated guard stays whole."""
    if guard.negated:
        return (guard.spelled,)
    return tuple(canonical_expr(a) for a in _conjuncts(guard.text))


def written_atoms(guard: Guard) -> dict[str, str]:
    """Each conjunct of `atoms(guard)` as written (`!use_kvcache` for `!use_kvcache`); the canonical
    text when the written one does not split the same way."""
    if guard.negated or not guard.written:
        return {a: guard.shown for a in atoms(guard)}
    raw = _conjuncts(guard.written)
    canonical = atoms(guard)
    if len(raw) != len(canonical):
        return {a: a for a in canonical}
    return dict(zip(canonical, raw, strict=True))
