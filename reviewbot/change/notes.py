"""The sentences a report shows for what the change stage could not analyse."""

from __future__ import annotations

from collections.abc import Sequence

from reviewbot.model.change import Note, SkipReason
from reviewbot.model.messages import Message, listing, msg

__all__ = ["human_size", "missing_note", "replaced_note", "skip_note", "unparsable_note"]

_WHY = {
    SkipReason.BINARY: msg("note.why.binary"),
    SkipReason.NON_UTF8: msg("note.why.non-utf8"),
    SkipReason.UNAVAILABLE: msg("note.why.unavailable"),
}


def human_size(n: int) -> str:
    """Bytes as a short figure: 512 B, 3.4 KB, 5.0 MB (binary multiples, as the limits are set)."""
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def skip_note(
    path: str, reason: SkipReason, *, size: int = 0, limit: int = 0, detail: Message | str = ""
) -> Note:
    """One sentence saying which file was not analysed and why."""
    why: Message | str
    if reason is SkipReason.TOO_LARGE:
        why = msg("note.why.too-large", size=human_size(size), limit=human_size(limit))
    else:
        why = detail or _WHY.get(reason, reason.value)
    return Note.of(reason, msg("note.skip", path=path, why=why), path)


def unparsable_note(path: str | None, error: str) -> Note:
    """A diff section (of one file, or of unknown files) that could not be parsed."""
    if path is None:
        return Note.of(SkipReason.UNPARSABLE_DIFF, msg("note.unparsable-diff.part", error=error))
    return Note.of(SkipReason.UNPARSABLE_DIFF, msg("note.unparsable-diff.file", path=path, error=error), path)


def replaced_note(path: str, count: int) -> Note:
    """A file that was analysed although `count` of its bytes were not UTF-8 (read as U+FFFD)."""
    return Note.of(SkipReason.REPLACED_BYTES, msg("note.replaced-bytes", path=path, count=f"{count:,}"), path)


def missing_note(paths: Sequence[str]) -> Note:
    """Unchanged files whose contents the repository does not hold (a partial clone, a mirror without
    some large objects): the review went on without them. No path: the note is not about a changed
    file, so it lowers neither coverage nor the status."""
    shown = listing(list(paths), 10)
    return Note.of(SkipReason.UNAVAILABLE, msg("note.missing-objects", count=len(paths), paths=shown))
