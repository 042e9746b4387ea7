"""Typed records of a change. Everything downstream reads these, never git or GitHub."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from reviewbot.model.messages import Message


class FileStatus(str, Enum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"


class SkipReason(str, Enum):
    BINARY = "binary"
    NON_UTF8 = "non-utf8"
    TOO_LARGE = "too-large"
    UNPARSABLE_DIFF = "unparsable-diff"
    UNPARSABLE_CODE = "unparsable-code"
    TRUNCATED = "truncated"
    CHECK_CRASHED = "check-crashed"
    UNAVAILABLE = "unavailable"
    BAD_CONFIG = "bad-config"  # the base's .reviewbot.toml was refused; the round used the defaults
    BUDGET = "budget"  # a bound of the round (model/budget.py) was reached; the rest was left out
    # Not a skip: a few bytes of the file were not UTF-8 and read as U+FFFD; the file was analysed.
    REPLACED_BYTES = "replaced-bytes"


@dataclass(frozen=True)
class Note:
    """Something the review could not see or do, said in the report and counted in `coverage`."""

    reason: SkipReason
    message: str  # the English sentence (JSON output, logs); `text` says it in any language
    path: str | None = None
    text: Message | None = field(default=None, compare=False)

    @classmethod
    def of(cls, reason: SkipReason, text: Message, path: str | None = None) -> Note:
        """A note from a catalogue message; `message` keeps its English text."""
        return cls(reason, text.render("en"), path, text)

    def localized(self, lang: str) -> str:
        """The sentence in `lang` (the English `message` when the note carries no catalogue text)."""
        return self.text.render(lang) if self.text is not None else self.message


@dataclass(frozen=True)
class Hunk:
    source_start: int
    source_length: int
    target_start: int
    target_length: int
    header: str
    added: tuple[tuple[int, str], ...]  # (head line number, text without newline)
    removed: tuple[tuple[int, str], ...]  # (base line number, text without newline)

    @property
    def whitespace_only(self) -> bool:
        """True when the hunk only adds/removes blank lines or changes indentation/spacing."""
        before = "".join("".join(t.split()) for _, t in self.removed)
        after = "".join("".join(t.split()) for _, t in self.added)
        return before == after


@dataclass(frozen=True)
class ChangedFile:
    path: str  # head path (base path for deletions)
    old_path: str | None  # base path; differs from path for renames; None for additions
    status: FileStatus
    hunks: tuple[Hunk, ...]
    base_text: str | None  # None when absent at base or skipped (see ChangeSet.notes)
    head_text: str | None
    binary: bool = False
    skipped: SkipReason | None = None

    @property
    def added_lines(self) -> dict[int, str]:
        return {n: t for h in self.hunks for n, t in h.added}

    @property
    def removed_lines(self) -> dict[int, str]:
        return {n: t for h in self.hunks for n, t in h.removed}


class RepoTree(Protocol):
    """Read access to one revision of the repository (for the repository-wide index)."""

    def paths(self) -> list[str]: ...

    def read(self, path: str) -> str | None:
        """The decoded text, or None for binary, non-UTF-8, too large or missing files."""
        ...


def read_many(tree: RepoTree, paths: Sequence[str]) -> dict[str, str | None]:
    """{path: text} of `paths`: in one batch when the tree offers `read_many` (a git tree reads them with
    one `git cat-file --batch`), else file by file."""
    batch = getattr(tree, "read_many", None)
    return dict(batch(list(paths))) if callable(batch) else {p: tree.read(p) for p in paths}


@dataclass
class ChangeSet:
    base_sha: str
    head_sha: str
    merge_base: str
    files: list[ChangedFile]
    patch_bytes: int
    diff_truncated: bool = False
    notes: list[Note] = field(default_factory=list)
    head_tree: RepoTree | None = None
    base_tree: RepoTree | None = None
    # Changed files known to exist but absent from `files` (cut by the diff limits).
    files_left_out: int = 0
    # Their paths, best-ranked first (reviewbot.change.select): what a cut left out, by name.
    left_out: tuple[str, ...] = ()

    def file(self, path: str) -> ChangedFile | None:
        for f in self.files:
            if f.path == path:
                return f
        return None

    @property
    def coverage(self) -> float:
        """Share of changed files the analysis could read in full (1.0 = nothing skipped).

        Files cut by the limits (`files_left_out`) and diff sections that could not be tied to
        any file (UNPARSABLE_DIFF notes without a path) count as unread files.
        """
        unattributed = sum(1 for n in self.notes if n.reason is SkipReason.UNPARSABLE_DIFF and n.path is None)
        total = len(self.files) + self.files_left_out + unattributed
        if not total:
            return 0.0 if self.diff_truncated or self.notes else 1.0
        seen = sum(1 for f in self.files if f.skipped is None)
        value = seen / total
        if self.diff_truncated:
            value = min(value, 0.99)
        return round(value, 4)

    def close(self) -> None:
        """Release what the trees hold open (GitTree keeps a git process for fast reads)."""
        for tree in (self.head_tree, self.base_tree):
            close = getattr(tree, "close", None)
            if callable(close):
                close()
