"""Who else reads a config field: the reads that give it an effect outside the code a flag skips.

A switch loses all its effect when the flag's rule fires only if every read of it lies in the code the
rule turns off. The follow stage (`lang.mentions.scan_readers`) parsed every file that mentions the
switch-like fields of that code; this module goes through those reads and keeps the ones that still
take effect while the guard holds. Reads that do not count:

- inside the skipped statements or the functions reached only from them (`reached`, less every
  function that another call site still runs: `exclusively_reached`);
- in code the guard rules out (`feasible.blocked_by`: a decode path when there is no KV cache);
- copies, not uses: the read is the whole value of an assignment on its line (an alias such as
  `self.logn = cfg.use_logn_attn`, whose own reads are reads of the field too, or a copy into
  another config: `config.use_logn_attn = attn.use_logn_attn`);
- descriptions, not uses: logging and printing lines, and functions that render the config
  (`to_string`, `__repr__`, `DebugConfigStr`);
- reads of a same-named field of an unrelated owner (the index knows the receiver's type and it is
  not in the config's family), and bare names that are not members (a kernel's `use_logn_attn`
  parameter);
- test files and vendored trees.

Pure: facts in, locations out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.coupled.feasible import RuledOut, blocked_by, name_words
from reviewbot.lang.calls import CALL_METHODS, CallGraph, CallSite, owner_of, split_callee
from reviewbot.lang.common import is_log_callee
from reviewbot.lang.facts import FieldRead, FileFacts, OwnerVia
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.model.finding import Location

__all__ = ["Readers", "exclusively_reached", "other_readers"]

# Words of functions that render a config rather than act on it.
_DESCRIBE_WORDS = frozenset({"str", "string", "repr", "debug", "dump", "print", "describe", "format", "log"})
_CALLEE = re.compile(r"([A-Za-z_][\w.:>-]*)\s*\(")
_STREAM = re.compile(r"<<")


@dataclass(frozen=True)
class Readers:
    """What is known of the field's reads outside the skipped code."""

    scanned: bool  # every file mentioning the field was searched
    elsewhere: tuple[Location, ...] = ()  # reads that keep an effect while the guard holds, by path/line
    widely_read: int = 0  # mentioned in this many files: too many to parse, taken as read elsewhere


def _describes(function: str | None, line: str) -> bool:
    if function and _DESCRIBE_WORDS & set(name_words(function.replace("::", ".").rsplit(".", 1)[-1])):
        return True
    if _STREAM.search(line) and re.search(r"\b(?:oss|os|ss|out|stream|cout|cerr|clog)\b", line):
        return True
    return any(
        is_log_callee(m.group(1).replace("::", ".").replace("->", ".")) for m in _CALLEE.finditer(line)
    )


def _copies(facts: FileFacts, r: FieldRead) -> bool:
    """The read is the whole value of an assignment on its line (an alias or a copy, not a use)."""
    return any(a.line == r.line and a.value == r.expr for a in facts.assignments)


def _foreign(index: RepoIndex, r: FieldRead, family: frozenset[str]) -> bool:
    """A read of a same-named field that is not the config's: a bare local or parameter, or a receiver
    whose type is known and outside the config's family."""
    if "." not in r.expr and not r.alias:
        owner, via = index.owner_of(r)
        return not (via is OwnerVia.SELF and (not family or owner in family))
    if not family:
        return False
    owner, _ = index.owner_of(r)
    return bool(owner) and owner not in family


def _files(index: RepoIndex, graph: CallGraph) -> dict[str, FileFacts]:
    files = dict(index.files)
    files.update(graph.readers)
    files.update(graph.files)  # the followed files were parsed in full
    return files


def _under_flag(graph: CallGraph, site: CallSite, flag: str) -> bool:
    """A condition of the site's function, at or above its line, names the flag (any receiver)."""
    facts = graph.facts(site.path)
    word = re.compile(rf"\b{re.escape(flag)}\b")
    return facts is not None and any(
        p.function == site.function and p.line <= site.line and word.search(p.text) for p in facts.predicates
    )


def _same_home(function: str, defined_in: str, site: CallSite, path: str, skipping: set[str]) -> bool:
    """The call site is in a method of the callee's class or of a class whose method holds the skipped
    code (the object lives while the skipped branch's method does), or, for a free function, in the module
    that defines it. Another class running the op (a sibling attention implementation) is picked by
    configuration: whether the guard's population reaches it is not known here, so it does not count."""
    cls = owner_of(function)
    if cls is None:
        return path == defined_in
    here = owner_of(site.function)
    return here is not None and (here == cls or here in skipping)


def _skipped_too(
    graph: CallGraph,
    site: CallSite,
    path: str,
    lines: set[tuple[str, int]],
    inside: set[tuple[str, str | None]],
    rules: tuple[RuledOut, ...],
    flag: str,
) -> bool:
    """The call site does not run while the rule fires: it is skipped code itself, lies in a function
    still held skipped or in code the guard rules out, or sits under a condition naming the flag."""
    return (
        (path, site.line) in lines
        or (path, site.function) in inside
        or blocked_by((site.function or "",), rules) is not None
        or _under_flag(graph, site, flag)
    )


def exclusively_reached(
    reached: Iterable[tuple[str, str | None]],
    graph: CallGraph,
    skipped_lines: Iterable[tuple[str, int]],
    rules: tuple[RuledOut, ...],
    flag: str,
) -> set[tuple[str, str | None]]:
    """The functions of `reached` that run only when the skipped code runs. A function keeps running (and
    with it whatever it calls) when a call site outside the skipped lines and outside the functions still
    held skipped runs it from its own home: another method of the same object (`start_grad_sync`, skipped
    in `finish_grad_sync` and called by the gradient hook `register_grad_ready` of the same class), or,
    for a free function, another function of its module (`_same_home`). A call site in a test, in code
    the guard rules out, or below a condition of its function that names the flag (`if
    need_rope_kv_cache:` on a parameter the caller passes the flag to: skipped too, though no read of the
    config field shows it) does not count. Decided to a fixed point over the call sites of the parsed
    files; callers in files the round did not parse are not seen."""
    inside = {key for key in reached if key[1] is not None}
    everything = set(inside)
    lines = set(skipped_lines)
    skipping = {  # the classes whose methods hold the skipped statements
        cls
        for path, calls in graph.calls.items()
        for site in calls.sites
        if (path, site.line) in lines and (cls := owner_of(site.function)) is not None
    }
    changed = True
    while changed and inside:
        changed = False
        wanted = {str(name).replace("::", ".").rsplit(".", 1)[-1] for _, name in inside}
        called_objects = bool(wanted & set(CALL_METHODS))
        for path, calls in sorted(graph.calls.items()):
            if is_test_path(path):
                continue
            for site in calls.sites:
                parts = split_callee(site.callee)
                # a called object (`self.rope_op(qkv)`) runs `__call__`/`forward`: any site may be one
                if not parts or not (parts[-1] in wanted or called_objects):
                    continue
                if _skipped_too(graph, site, path, lines, inside, rules, flag):
                    continue
                for callee in graph.resolve(site):
                    key = (callee.function.path, callee.function.name)
                    # a function shown to run elsewhere runs what it calls, whatever the class
                    escaped = (path, site.function) in everything and (path, site.function) not in inside
                    if key in inside and (
                        escaped
                        or _same_home(callee.function.name, callee.function.path, site, path, skipping)
                    ):
                        inside.discard(key)
                        changed = True
    return inside


def other_readers(
    leaf: str,
    index: RepoIndex,
    graph: CallGraph | None,
    reached: Iterable[tuple[str, str | None]],
    skipped_lines: Iterable[tuple[str, int]],
    rules: tuple[RuledOut, ...],
    family: frozenset[str] = frozenset(),
) -> Readers:
    """Reads of field `leaf` that take effect while the guard holds outside the skipped code."""
    if graph is None or leaf not in graph.mentions:
        return Readers(scanned=False)
    if leaf in graph.widely_read:
        return Readers(scanned=True, widely_read=graph.widely_read[leaf])
    inside = set(reached)
    lines = set(skipped_lines)
    found: set[Location] = set()
    for path, facts in sorted(_files(index, graph).items()):
        if is_test_path(path) or index.is_excluded(path):
            continue
        for r in facts.reads:
            if r.field != leaf or r.function is None:
                continue
            if (path, r.function) in inside or (path, r.line) in lines:
                continue
            text = graph.mention_lines.get(path, {}).get(r.line, "")
            if blocked_by((r.function,), rules) is not None or _describes(r.function, text):
                continue
            if _copies(facts, r) or _foreign(index, r, family):
                continue
            found.add(Location(path, r.line, text))
    return Readers(scanned=True, elsewhere=tuple(sorted(found)))
