"""The sentences a report shows for what the change stage could not analyse."""

from __future__ import annotations

from reviewbot.model.change import Note, SkipReason

__all__ = ["human_size", "skip_note", "unparsable_note"]

_WHY = {
    SkipReason.BINARY: "binary file",
    SkipReason.NON_UTF8: "not UTF-8 text",
    SkipReason.UNAVAILABLE: "its content could not be read",
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


def skip_note(path: str, reason: SkipReason, *, size: int = 0, limit: int = 0, detail: str = "") -> Note:
    """One sentence saying which file was not analysed and why."""
    if reason is SkipReason.TOO_LARGE:
        why = f"{human_size(size)} is over the {human_size(limit)} file limit"
    else:
        why = detail or _WHY.get(reason, reason.value)
    return Note(reason, f"{path}: {why}; not analysed", path)


def unparsable_note(path: str | None, error: str) -> Note:
    """A diff section (of one file, or of unknown files) that could not be parsed."""
    if path is None:
        return Note(
            SkipReason.UNPARSABLE_DIFF, f"part of the diff could not be parsed ({error}); not analysed"
        )
    message = f"{path}: its diff could not be parsed ({error}); not analysed"
    return Note(SkipReason.UNPARSABLE_DIFF, message, path)
