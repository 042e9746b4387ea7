"""Normalised boolean predicates, shared by both languages.

A predicate is a tree of And / Or / Not over Atoms. Atoms are canonical texts of comparisons
or boolean operands, written language-neutrally: `::` and `->` become `.`, `this.`/`self.`
prefixes are dropped, `true`/`false`/`nullptr` become `True`/`False`/`None`, and the operands
of `==` / `!=` are put in a fixed order. And/Or are flattened and sorted, so
`!u && s == RopeStyle::No` (C++) and `self.s == RopeStyle.No and not self.u` (Python)
have the same `key`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "Atom",
    "Not",
    "And",
    "Or",
    "Pred",
    "conj",
    "disj",
    "negate",
    "canonical_operand",
    "loose_key",
    "compound_parts",
    "plain_conjuncts",
]

_LITERALS = {"true": "True", "false": "False", "nullptr": "None", "NULL": "None"}


_STRING = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")


def outside_strings(text: str, rewrite: Callable[[str], str]) -> str:
    """Apply `rewrite` to the code between string and char literals; literals stay as written.

    `path == "model a.bin"` and `path == "modela.bin"` are different predicates.
    """
    if '"' not in text and "'" not in text:
        return rewrite(text)
    parts = _STRING.split(text)
    return "".join(part if i % 2 else rewrite(part) for i, part in enumerate(parts))


def canonical_operand(text: str) -> str:
    """Canonical spelling of an operand: no whitespace, `.` for scope/member access, no self/this."""
    t = outside_strings(text, lambda code: "".join(code.split()).replace("::", ".").replace("->", "."))
    for prefix in ("this.", "self.", "(*this)."):
        if t.startswith(prefix):
            t = t[len(prefix) :]
    return _LITERALS.get(t, t)


@dataclass(frozen=True, order=True)
class Atom:
    text: str

    @property
    def key(self) -> str:
        return self.text

    def atoms(self) -> frozenset[Atom]:
        return frozenset({self})

    def size(self) -> int:
        return 1

    @staticmethod
    def comparison(left: str, op: str, right: str) -> Atom:
        left_c, right_c = canonical_operand(left), canonical_operand(right)
        if op in ("==", "!=") and right_c < left_c:
            left_c, right_c = right_c, left_c
        flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
        if op in flipped and right_c < left_c:
            left_c, right_c, op = right_c, left_c, flipped[op]
        return Atom(f"{left_c} {op} {right_c}")


@dataclass(frozen=True, order=True)
class Not:
    arg: Pred

    @property
    def key(self) -> str:
        return f"!{self.arg.key}" if isinstance(self.arg, Atom) else f"!({self.arg.key})"

    def atoms(self) -> frozenset[Atom]:
        return self.arg.atoms()

    def size(self) -> int:
        return self.arg.size()


@dataclass(frozen=True, order=True)
class And:
    args: tuple[Pred, ...]

    @property
    def key(self) -> str:
        return " && ".join(_wrap(a, Or) for a in self.args)

    def atoms(self) -> frozenset[Atom]:
        return frozenset().union(*(a.atoms() for a in self.args))

    def size(self) -> int:
        return sum(a.size() for a in self.args)


@dataclass(frozen=True, order=True)
class Or:
    args: tuple[Pred, ...]

    @property
    def key(self) -> str:
        return " || ".join(_wrap(a, And) for a in self.args)

    def atoms(self) -> frozenset[Atom]:
        return frozenset().union(*(a.atoms() for a in self.args))

    def size(self) -> int:
        return sum(a.size() for a in self.args)


Pred = Atom | Not | And | Or


def plain_conjuncts(p: Pred) -> tuple[Atom | Not, ...] | None:
    """The conditions of a guard that is a plain conjunction (`a && !b`: atoms and negated atoms), or
    None when it holds an `or` or a negated compound (`!(a && b)`)."""
    parts = p.args if isinstance(p, And) else (p,)
    out: list[Atom | Not] = []
    for c in parts:
        if not (isinstance(c, Atom) or (isinstance(c, Not) and isinstance(c.arg, Atom))):
            return None
        out.append(c)
    return tuple(out)


def _wrap(p: Pred, kind: type) -> str:
    return f"({p.key})" if isinstance(p, kind) else p.key


def _sort_unique(args: list[Pred]) -> tuple[Pred, ...]:
    seen: dict[str, Pred] = {}
    for a in args:
        seen.setdefault(a.key, a)
    return tuple(seen[k] for k in sorted(seen))


def conj(*parts: Pred | None) -> Pred | None:
    """Flattened, sorted conjunction; None parts (no condition) are ignored."""
    flat: list[Pred] = []
    for p in parts:
        if p is None:
            continue
        flat.extend(p.args if isinstance(p, And) else (p,))
    if not flat:
        return None
    args = _sort_unique(flat)
    return args[0] if len(args) == 1 else And(args)


def disj(*parts: Pred) -> Pred:
    flat: list[Pred] = []
    for p in parts:
        flat.extend(p.args if isinstance(p, Or) else (p,))
    args = _sort_unique(flat)
    return args[0] if len(args) == 1 else Or(args)


_NEGATED_OP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def negate(p: Pred) -> Pred:
    """Logical negation with `!!x == x` and `!(a == b) == (a != b)`."""
    if isinstance(p, Not):
        return p.arg
    if isinstance(p, Atom):
        parts = p.text.split(" ")
        if len(parts) == 3 and parts[1] in _NEGATED_OP:
            return Atom.comparison(parts[0], _NEGATED_OP[parts[1]], parts[2])
    return Not(p)


_PATH_RE = re.compile(r"(?<![\w.])[a-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _strip_receiver(text: str) -> str:
    """`config.rope_config.style` -> `style`; `RopeStyle.No` and `flag` stay.

    Receivers (`config`, `cfg`, `self.attn_config`) differ between call sites and languages for
    the same field, so the loose key keeps only the field name of lowercase dotted paths.
    """
    return outside_strings(text, lambda code: _PATH_RE.sub(lambda m: m.group(0).rsplit(".", 1)[1], code))


def loose_key(p: Pred) -> str:
    """Key that ignores receiver variables, for matching the same predicate across call sites."""
    if isinstance(p, Atom):
        parts = p.text.split(" ")
        if len(parts) == 3:
            return Atom.comparison(_strip_receiver(parts[0]), parts[1], _strip_receiver(parts[2])).text
        return _strip_receiver(p.text)
    if isinstance(p, Not):
        inner = loose_key(p.arg)
        return f"!{inner}" if isinstance(p.arg, Atom) else f"!({inner})"
    sep = " && " if isinstance(p, And) else " || "
    inner_kind = Or if isinstance(p, And) else And
    return sep.join(
        sorted(f"({loose_key(a)})" if isinstance(a, inner_kind) else loose_key(a) for a in p.args)
    )


def compound_parts(p: Pred) -> list[Pred]:
    """`p` and every And/Or node inside it with two or more atoms, outermost first."""
    out: list[Pred] = []
    stack: list[Pred] = [p]
    while stack:
        node = stack.pop(0)
        if isinstance(node, (And, Or)):
            if len(node.atoms()) >= 2:
                out.append(node)
            stack.extend(node.args)
        elif isinstance(node, Not):
            stack.append(node.arg)
    return out


def literals(guard: Pred | None) -> list[tuple[Atom, bool]]:
    """The atoms of a conjunction with the truth value the guard needs (`!x` needs x False).

    Disjunctions and negated compounds are not literals and are left out.
    """
    if guard is None:
        return []
    parts = guard.args if isinstance(guard, And) else (guard,)
    out: list[tuple[Atom, bool]] = []
    for p in parts:
        if isinstance(p, Atom):
            out.append((p, True))
        elif isinstance(p, Not) and isinstance(p.arg, Atom):
            out.append((p.arg, False))
    return out
