"""Environment switches before and after a change (pure): which switch lost its readers, which alias went,
whose parsing or default changed.

An environment read is a fact of the front ends (`facts.EnvRead`); a write of the environment
(`os.environ["NEW"] = os.environ.get("OLD")`) is a statement of `lang.clauses`. The head tree's readers
of a name come from the repository index, which parses every file that mentions the name (the
pipeline adds the names of the changed reads to what it indexes, see `analysis.history`).

- `removed_switches`: a name read on a line the change removed that no source file of the head reads
  any more (tests do not count): the switch is gone, or renamed when the same function now reads a
  new name instead. A name still read anywhere in the head, in either language, is not removed.
- `lost_aliases`: a removed write `os.environ["NEW"] = <reads OLD>` (a compatibility alias) whose old
  name is still read somewhere, but not by every reader of the new name: those readers no longer see
  the old switch.
- `parse_changes`: the same name read in the same function, before and after, with a parsing that now
  raises on a value the old one accepted (`· == "1"` -> `bool(int(·))`: `X=true` now raises), or that
  turns `1` from true to false. A test that is the exact complement of the old one (`· != "1"` ->
  `· == "1"`) reads the switch the same way: the statement around it (an `if` that became an `assert`)
  gives it its meaning, not the parsing.
- `default_changes`: the same name read in the same function with another default whose value (after
  the parsing) differs: every deployment that never set it changes behaviour.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.envs.parse import SAMPLES, Outcome, Result, evaluate, same_literal, value_of_default
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import Clause, ClauseKind, Clauses
from reviewbot.lang.env import is_env_name
from reviewbot.lang.facts import EnvRead, FileFacts
from reviewbot.lang.index import RepoIndex, is_excluded, is_test_path

__all__ = [
    "RemovedSwitch",
    "LostAlias",
    "ParseChange",
    "EnvDefaultChange",
    "head_readers",
    "removed_switches",
    "lost_aliases",
    "parse_changes",
    "default_changes",
    "changed_env_names",
    "read_key",
    "complementary",
]


@dataclass(frozen=True)
class RemovedSwitch:
    name: str
    base: EnvRead  # the removed read (base numbering)
    path: str  # head path of the file it was removed from
    line: int  # where the finding sits in the head: the new name's read, or where the read was
    renamed_to: EnvRead | None = None  # the read that took its place in the same function
    alias_of: str = ""  # the removed read fed a write of this other variable (`os.environ["NEW"] = ...`)


@dataclass(frozen=True)
class LostAlias:
    old: str  # the name the alias kept alive (`USE_BLOCK_CACHE`)
    new: str  # the name it was copied to (`REUSE_CACHE`)
    write: Clause  # the removed write (base numbering)
    write_path: str  # base path of the write
    kept: tuple[EnvRead, ...]  # head readers of the old name
    lost: tuple[EnvRead, ...]  # head readers of the new name that do not read the old one
    path: str
    line: int


@dataclass(frozen=True)
class ParseChange:
    name: str
    base: EnvRead
    head: EnvRead
    breaks: tuple[tuple[str, Result, Result], ...]  # (value set, before, after) that behave worse now


@dataclass(frozen=True)
class EnvDefaultChange:
    name: str
    base: EnvRead
    head: EnvRead
    before: Result  # the value an unset variable gives, before and after
    after: Result


def read_key(e: EnvRead) -> tuple[str, int, str, str]:
    return (e.path, e.line, e.name, e.parse)


def _writes_at(cl: Clauses | None) -> dict[int, Clause]:
    if cl is None:
        return {}
    return {c.line: c for c in cl.clauses if c.kind is ClauseKind.ENV_WRITE}


def _is_write(e: EnvRead, writes: dict[int, Clause] | None) -> bool:
    """`os.environ["X"] = v` is recorded by the front ends like a read of `X`; it writes `X`."""
    if writes is not None:
        w = writes.get(e.line)
        return w is not None and w.env_name == e.name and e.name not in w.env_sources
    # Without the statement: a bare `os.environ[...]` that is neither parsed nor assigned anywhere.
    return e.accessor == "os.environ[]" and not e.parse and not e.target


def _reads(facts: FileFacts | None, cl: Clauses | None) -> list[EnvRead]:
    if facts is None:
        return []
    writes = _writes_at(cl)
    return sorted((e for e in facts.env_reads if not _is_write(e, writes)), key=read_key)


def _counted(path: str, index: RepoIndex) -> bool:
    return not is_test_path(path) and not index.is_excluded(path) and not is_excluded(path)


def head_readers(name: str, index: RepoIndex, sides: Iterable[Side]) -> list[EnvRead]:
    """Reads of `name` in the head's source files (tests and vendored trees left out), by path and line.

    Changed files are judged with their statements (a write is not a read); other files by the shape
    of the read (see `_is_write`)."""
    by_path = {s.path: s for s in sides}
    out: list[EnvRead] = []
    for e in index.env_reads(name):
        if not _counted(e.path, index):
            continue
        side = by_path.get(e.path)
        if side is not None:
            if side.head is not None and _is_write(e, _writes_at(side.head)):
                continue
        elif _is_write(e, None):
            continue
        out.append(e)
    for side in by_path.values():  # changed files the index did not hold (no tree: fixtures, tests)
        if side.head_facts is not None and side.path not in index.files:
            out.extend(e for e in _reads(side.head_facts, side.head) if e.name == name)
    return sorted(set(out), key=read_key)


def _quoted(name: str) -> re.Pattern[str]:
    return re.compile(rf"[\"']{re.escape(name)}[\"']")


def _still_named(name: str, sides: Iterable[Side]) -> bool:
    """A changed head file still spells the name as a string (a table of names, a helper the front ends
    do not recognise): the switch may still be read, so it is not called removed."""
    rx = _quoted(name)
    for s in sides:
        if s.head is None:
            continue
        if any(name in c.env_sources or c.env_name == name for c in s.head.clauses):
            return True
        if any(rx.search(c.text) for c in s.head.clauses if c.kind is not ClauseKind.ENV_WRITE):
            return True
    return False


def _removed_reads(s: Side) -> list[EnvRead]:
    return [e for e in _reads(s.base_facts, s.base) if e.line in s.removed]


def _added_reads(s: Side) -> list[EnvRead]:
    return [e for e in _reads(s.head_facts, s.head) if e.line in s.added]


def _alias_target(s: Side, e: EnvRead) -> str:
    w = _writes_at(s.base).get(e.line)
    return w.env_name if w is not None and e.name in w.env_sources and w.env_name != e.name else ""


def removed_switches(sides: list[Side], index: RepoIndex) -> list[RemovedSwitch]:
    """Names the change stopped reading everywhere (one per name, at its first removed read)."""
    out: dict[str, RemovedSwitch] = {}
    for s in sides:
        base_names = {e.name for e in _reads(s.base_facts, s.base)}
        for e in _removed_reads(s):
            if e.name in out or not is_env_name(e.name):
                continue  # `os.environ.get("has_zeros")`: not spelled like a switch deployments set
            if head_readers(e.name, index, sides) or _still_named(e.name, sides):
                continue
            new = [
                h
                for h in _added_reads(s)
                if h.function == e.function and h.name not in base_names and h.name != e.name
            ]
            # The read that took its place: the one assigned to the same target, else the nearest.
            renamed = (
                min(
                    new,
                    key=lambda h: (
                        h.target != e.target or not e.target,
                        abs(s.head_line(e.line) - h.line),
                        h.line,
                    ),
                )
                if new
                else None
            )
            line = renamed.line if renamed is not None else s.head_line(e.line)
            out[e.name] = RemovedSwitch(e.name, e, s.path, line, renamed, _alias_target(s, e))
    return sorted(out.values(), key=lambda r: (r.path, r.line, r.name))


def lost_aliases(sides: list[Side], index: RepoIndex) -> list[LostAlias]:
    """Removed compatibility aliases whose old name survives in only some readers of the new name."""
    kept_writes = {
        (c.env_name, src) for s in sides if s.head is not None for c in s.head.clauses for src in c.env_sources
        if c.kind is ClauseKind.ENV_WRITE
    }  # fmt: skip
    out: list[LostAlias] = []
    seen: set[tuple[str, str]] = set()
    for s in sides:
        if s.base is None:
            continue
        for w in s.base.clauses:
            if w.kind is not ClauseKind.ENV_WRITE or not (set(range(w.line, w.end_line + 1)) & s.removed):
                continue
            for old in w.env_sources:
                if old == w.env_name or (w.env_name, old) in kept_writes or (old, w.env_name) in seen:
                    continue
                alias = _lost_alias(s, w, old, index, sides)
                if alias is not None:
                    seen.add((old, w.env_name))
                    out.append(alias)
    return sorted(out, key=lambda a: (a.path, a.line, a.old))


def _lost_alias(s: Side, w: Clause, old: str, index: RepoIndex, sides: list[Side]) -> LostAlias | None:
    """The removed write `w` (new name = old name) as a lost alias: some head reader still reads `old`
    while other readers of the new name do not (anchored at an added reader of `old` when there is one)."""
    kept = head_readers(old, index, sides)
    if not kept:
        return None  # no reader left at all: `removed_switches` says so
    reading_old = {(k.path, k.function) for k in kept}
    lost = tuple(r for r in head_readers(w.env_name, index, sides) if (r.path, r.function) not in reading_old)
    if not lost:
        return None
    added = [k for k in kept if any(k.path == t.path and k.line in t.added for t in sides)]
    anchor = added[0] if added else None
    path = anchor.path if anchor is not None else s.path
    line = anchor.line if anchor is not None else s.head_line(w.line)
    return LostAlias(old, w.env_name, w, s.old_path, tuple(kept), lost, path, line)


def _pairs(s: Side) -> list[tuple[EnvRead, EnvRead]]:
    """A removed read and an added read of the same name in the same function: one read, rewritten."""
    added = _added_reads(s)
    used: set[tuple[str, int, str, str]] = set()
    out: list[tuple[EnvRead, EnvRead]] = []
    for b in _removed_reads(s):
        options = [
            h for h in added if h.name == b.name and h.function == b.function and read_key(h) not in used
        ]
        if not options:
            continue
        h = min(options, key=lambda h: (abs(s.head_line(b.line) - h.line), h.line))
        used.add(read_key(h))
        out.append((b, h))
    return out


def _worse(before: Result, after: Result) -> bool:
    """`1` (the usual "on") used to read as on and now reads as off, or raises."""
    if before.outcome is not Outcome.VALUE or after.outcome is Outcome.UNKNOWN:
        return False
    if after.outcome is Outcome.RAISES:
        return True
    return isinstance(before.value, bool | int) and bool(before.value) and not bool(after.value)


def complementary(a: EnvRead, b: EnvRead) -> bool:
    """Two bool parses of one switch that split every value (and unset) the same way, with opposite
    truth (`· != "1"` and `· == "1"`): one test of the switch, negated, not two readings of it."""
    for sample in (*SAMPLES, None):
        x = unset_value(a) if sample is None else evaluate(a.parse, sample)
        y = unset_value(b) if sample is None else evaluate(b.parse, sample)
        if x.outcome is not Outcome.VALUE or y.outcome is not Outcome.VALUE:
            return False
        if not isinstance(x.value, bool) or not isinstance(y.value, bool) or x.value == y.value:
            return False
    return True


def parse_changes(sides: list[Side]) -> list[ParseChange]:
    """Reads whose new parsing raises on, or turns off, a value the old parsing accepted."""
    out: list[ParseChange] = []
    for s in sides:
        for b, h in _pairs(s):
            if b.parse == h.parse or not b.parse or not h.parse or complementary(b, h):
                continue
            breaks: list[tuple[str, Result, Result]] = []
            for sample in SAMPLES:
                before, after = evaluate(b.parse, sample), evaluate(h.parse, sample)
                if before.outcome is Outcome.UNKNOWN or after.outcome is Outcome.UNKNOWN:
                    breaks = []
                    break
                # A value that used to work and now raises; or `1`, the usual "on", now reading as off.
                if (after.outcome is Outcome.RAISES and before.outcome is Outcome.VALUE) or (
                    sample == "1" and _worse(before, after)
                ):
                    breaks.append((sample, before, after))
            if breaks:
                out.append(ParseChange(b.name, b, h, tuple(breaks)))
    return sorted(out, key=lambda p: (p.head.path, p.head.line, p.name))


def unset_value(e: EnvRead) -> Result:
    """What the read gives when the variable is not set: its default, parsed as the read parses it."""
    default = value_of_default(e.default)
    if default.outcome is not Outcome.VALUE:
        return default
    if default.value is None:
        return default if not e.parse else evaluate(e.parse, None)
    return evaluate(e.parse, default.value)


def default_changes(sides: list[Side]) -> list[EnvDefaultChange]:
    """Reads of the same name in the same function whose default (as parsed) changed."""
    out: list[EnvDefaultChange] = []
    for s in sides:
        for b, h in _pairs(s):
            if b.default is None or h.default is None or same_literal(b.default, h.default):
                continue
            if b.parse != h.parse:
                continue  # a parse change too: compared by `parse_changes`, not guessed here
            before, after = unset_value(b), unset_value(h)
            if "None" in (b.default, h.default) and not (
                isinstance(before.value, bool) and isinstance(after.value, bool)
            ):
                continue  # a sentinel became a value (or back): the code around decides, not known here
            if before.outcome is Outcome.UNKNOWN or after.outcome is Outcome.UNKNOWN:
                before, after = value_of_default(b.default), value_of_default(h.default)
            if before.outcome is not Outcome.VALUE or after.outcome is not Outcome.VALUE:
                continue  # a computed default: what an unset variable gives is not known here
            if before.value == after.value:
                continue
            out.append(EnvDefaultChange(b.name, b, h, before, after))
    return sorted(out, key=lambda d: (d.head.path, d.head.line, d.name))


def changed_env_names(sides: list[Side]) -> set[str]:
    """Variables read or written on the changed lines of either side (what the index must know about)."""
    names: set[str] = set()
    for s in sides:
        names.update(e.name for e in _removed_reads(s))
        names.update(e.name for e in _added_reads(s))
        for cl, lines in ((s.base, s.removed), (s.head, s.added)):
            if cl is None:
                continue
            for c in cl.clauses:
                if c.kind is ClauseKind.ENV_WRITE and set(range(c.line, c.end_line + 1)) & lines:
                    names.add(c.env_name)
                    names.update(c.env_sources)
    return {n for n in names if n}
