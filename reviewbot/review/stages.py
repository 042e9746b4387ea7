"""The core's first two stages: parse both sides of the changed files (`parse_stage`), then index
the head repository around what the change derives (`index_stage`).

A file tree-sitter cannot read where the change is gets a note; past the round's time or memory
budget the files not parsed yet are left out, and a note says so (review.budget).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reviewbot.analysis.derive import ChangedDerivation, added_predicates, changed_derivations
from reviewbot.analysis.history import history_names
from reviewbot.analysis.names import interesting_names
from reviewbot.lang.build import build_index
from reviewbot.lang.calls import CallGraph
from reviewbot.lang.env import doc_mentions
from reviewbot.lang.facts import FileFacts, PredicateUse, lang_for_path
from reviewbot.lang.follow import follow_calls
from reviewbot.lang.index import RepoIndex, TestRef, is_test_path
from reviewbot.lang.parse import parse_many
from reviewbot.model.change import ChangeSet, Note, SkipReason
from reviewbot.model.messages import msg
from reviewbot.review.budget import Meter, leave_out_from

__all__ = ["Parsed", "Indexed", "parse_stage", "index_stage", "changed_only_index", "line_ranges"]


# Files parsed per facts-cache round trip: one lookup and one write transaction for a batch rather
# than per file (a 500-file change spent 0.3 s in per-file cache statements). The round's budget is
# checked between batches.
_PARSE_BATCH = 32


def _parse_side(
    change: ChangeSet, head: bool, notes: list[Note], meter: Meter | None = None
) -> dict[str, FileFacts]:
    out: dict[str, FileFacts] = {}
    todo: list[tuple[int, str, str]] = []
    for i, f in enumerate(change.files):
        path = f.path if head else (f.old_path or f.path)
        text = f.head_text if head else f.base_text
        if text is None or f.skipped is not None or lang_for_path(path) is None:
            continue
        todo.append((i, path, text))
    for start in range(0, len(todo), _PARSE_BATCH):
        batch = todo[start : start + _PARSE_BATCH]
        why = meter.over() if meter is not None else None
        if why is not None and meter is not None:
            # Out of time or memory: the files not parsed yet are left out (both sides), and said so.
            notes.append(meter.note(why, leave_out_from(change, batch[0][0])))
            break
        parsed = parse_many([(path, text, None) for _, path, text in batch], 1, [None] * len(batch))
        for (i, path, _), facts in zip(batch, parsed, strict=True):
            if facts is None:
                continue
            if facts.error_spans:
                # tree-sitter recovers around what it cannot read: the change is unseen only where a
                # changed line (added on the head, removed on the base) lies in an unread region.
                f = change.files[i]
                changed = f.added_lines if head else f.removed_lines
                unread = facts.unparsed_lines(changed)
                if unread:
                    side = "" if head else " (base)"
                    notes.append(
                        Note.of(
                            SkipReason.UNPARSABLE_CODE,
                            msg("note.unparsable-lines", path=path + side, lines=line_ranges(unread)),
                            path,
                        )
                    )
            out[path] = facts
    return out


def line_ranges(lines: list[int]) -> str:
    """`3, 7-9, 12` for [3, 7, 8, 9, 12] (sorted, distinct)."""
    parts: list[str] = []
    start = prev = lines[0]
    for n in [*lines[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(parts)


@dataclass(frozen=True)
class Parsed:
    """Stage `parse`: facts of both sides of the changed files, and what the change derives."""

    head_facts: dict[str, FileFacts]
    base_facts: dict[str, FileFacts]
    derivations: list[ChangedDerivation]
    predicates: list[PredicateUse]
    notes: tuple[Note, ...]


@dataclass(frozen=True)
class Indexed:
    """Stage `index`: the head repository's index, its test files and the followed call graph."""

    index: RepoIndex
    test_files: list[str]
    calls: CallGraph | None
    notes: tuple[Note, ...]
    docs: dict[str, tuple[TestRef, ...]] = field(default_factory=dict)  # see CheckContext.docs


def parse_stage(change: ChangeSet, exclude: Sequence[str] = (), meter: Meter | None = None) -> Parsed:
    notes: list[Note] = []
    head_facts = _parse_side(change, True, notes, meter)
    base_facts = _parse_side(change, False, [])
    derivations = changed_derivations(change, base_facts, head_facts, exclude)
    return Parsed(head_facts, base_facts, derivations, added_predicates(change, head_facts), tuple(notes))


def index_stage(change: ChangeSet, parsed: Parsed, exclude: Sequence[str] = ()) -> Indexed:
    # The base-vs-head rules also ask about environment variables, changed defaults and removed writes.
    history = history_names(change, parsed.base_facts, parsed.head_facts)
    names = interesting_names(parsed.derivations, parsed.predicates, functions=False) | history.index
    test_names = interesting_names(parsed.derivations, parsed.predicates) | history.index
    tree = change.head_tree
    if tree is None:
        return changed_only_index(parsed, Note.of(SkipReason.UNAVAILABLE, msg("note.no-tree")))
    index = build_index(tree, names, parsed.head_facts, test_names, exclude=exclude)
    # Vendored trees and `[review] exclude` globs hold no tests of this project either.
    test_files = [p for p in tree.paths() if is_test_path(p) and not index.is_excluded(p)]
    # What the derived flags gate, followed into the functions it calls (those files parsed in full).
    fields = {d.head.field for d in parsed.derivations}
    calls = follow_calls(tree, index, fields) if parsed.derivations else None
    docs = doc_mentions(tree, history.docs) if history.docs else {}
    return Indexed(index, test_files, calls, (), docs)


def changed_only_index(parsed: Parsed, note: Note) -> Indexed:
    """An index of the changed files alone (no tree to search, or no budget left to search it)."""
    index = RepoIndex()
    for facts in parsed.head_facts.values():
        index.add(facts)
    return Indexed(index, [], None, (note,))
