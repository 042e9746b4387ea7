"""A constructor's initialiser that now takes its value from another config field with another default
(`reserve_(cfg.reserve_blocks_)` -> `reserve_(cfg.reserve_ratio_ * free / 100)`): the read fields' defaults
are looked up in the changed files and the index (pure)."""

from __future__ import annotations

import re

from reviewbot.analysis.defaults.records import DefaultChange, DefaultKind
from reviewbot.analysis.envs.parse import same_literal
from reviewbot.analysis.sides import Side
from reviewbot.lang.facts import Assignment, FileFacts
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.owners import is_init_function

__all__ = ["initialiser", "initialiser_changes", "reads_of"]


_PATHS = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|(?<![\w.])[A-Za-z_]\w*_(?![\w(])")


def _substituted(value: str, defaults: dict[str, str]) -> tuple[str, frozenset[str]]:
    """`value` with each config field it reads replaced by that field's default, and the fields replaced."""
    used: set[str] = set()

    def sub(m: re.Match[str]) -> str:
        field = m.group(0).rsplit(".", 1)[-1]
        if field in defaults:
            used.add(field)
            return defaults[field]
        return m.group(0)

    return _PATHS.sub(sub, value), frozenset(used)


def _known_defaults(facts: list[FileFacts], index: RepoIndex, fields: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in facts:
        for fd in sorted(f.defaults, key=lambda fd: (fd.path, fd.line)):
            out.setdefault(fd.field, fd.value)
    for name in sorted(fields - set(out)):
        values = sorted({fd.value for fd in index.defaults(name)})
        if len(values) == 1:
            out[name] = values[0]
    return out


def reads_of(value: str) -> set[str]:
    return {m.group(0).rsplit(".", 1)[-1] for m in _PATHS.finditer(value)}


def initialiser_changes(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    out: list[DefaultChange] = []
    bases = [s.base_facts for s in sides if s.base_facts is not None]
    heads = [s.head_facts for s in sides if s.head_facts is not None]
    for s in sides:
        if s.base_facts is None or s.head_facts is None:
            continue
        old = {
            (a.function, a.target): a
            for a in s.base_facts.assignments
            if initialiser(a) and a.line in s.removed
        }
        new = {
            (a.function, a.target): a
            for a in s.head_facts.assignments
            if initialiser(a) and a.line in s.added
        }
        for key in sorted(set(old) & set(new), key=lambda k: (k[0] or "", k[1])):
            b, h = old[key], new[key]
            if b.value == h.value:
                continue
            fields = reads_of(b.value) | reads_of(h.value)
            was, used_b = _substituted(b.value, _known_defaults(bases, index, fields))
            now, used_h = _substituted(h.value, _known_defaults(heads, index, fields))
            # Only a value that now comes from another config field with its own default: a receiver
            # renamed, or a formula around the same field, is not a new default.
            if not used_b or not used_h or used_b == used_h or same_literal(was, now) or was == now:
                continue
            out.append(
                DefaultChange(DefaultKind.INITIALISER, h.target, h.field, "", b.value, h.value, s.path, h.line,
                              s.old_path, b.line, old_effective=was, new_effective=now)
            )  # fmt: skip
    return out


def initialiser(a: Assignment) -> bool:
    return a.guard is None and is_init_function(a.function) and a.lang.value == "cpp"
