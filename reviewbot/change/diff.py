"""Stage 1: a pull request's change, read from git, as a ChangeSet.

`load_change` shows the diff the way GitHub does (merge base of base and head against head).
It first asks git for the list of changed files (`diff --raw`), skips what must not be read
(symlinks, submodules, files over the size limit) before any diff text is made, then streams
the patch of the rest and keeps whole files until a limit is reached. Nothing is dropped
silently: every file that is not analysed has a Note, and `ChangeSet.coverage` counts it.

The limits (files, diff bytes, diff lines) keep files in the order of `reviewbot.change.select.rank`,
not in path order: sources first, generated, vendored and data files last, so padding a pull request
with files that sort before its real change does not push that change out. The kept files
are returned in git's (path) order; `ChangeSet.left_out` names the rest, best-ranked first.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.change.git import (
    GITLINK_MODE,
    SYMLINK_MODE,
    DiffEntry,
    GitTree,
    decode_bytes,
    diff_patch_chunks,
    diff_raw,
    merge_base,
    resolve,
)
from reviewbot.change.notes import human_size, missing_note, replaced_note, skip_note, unparsable_note
from reviewbot.change.patch import ParsedSection, parse_patch, parse_section
from reviewbot.change.select import rank
from reviewbot.errors import UsageError
from reviewbot.model.change import ChangedFile, ChangeSet, FileStatus, Note, SkipReason
from reviewbot.model.messages import Message, msg

__all__ = ["DEFAULT_LIMITS", "Limits", "load_change", "parse_patch"]

_STATUS = {"A": FileStatus.ADDED, "D": FileStatus.DELETED, "R": FileStatus.RENAMED, "C": FileStatus.RENAMED}
# Past this many characters of "leave these files out" pathspecs, filtering the streamed diff is
# cheaper than a command line near the kernel's argument limit.
_MAX_PATHSPEC_CHARS = 100_000


@dataclass(frozen=True)
class Limits:
    """How much of a change is analysed; what is over a limit is skipped with a Note."""

    max_file_bytes: int = 1 << 20  # either side of a file over this: not read, not diffed
    max_diff_bytes: int = 4 << 20
    max_files: int = 3000
    max_diff_lines: int = 50_000

    def __post_init__(self) -> None:
        for name in ("max_file_bytes", "max_diff_bytes", "max_files", "max_diff_lines"):
            if getattr(self, name) <= 0:
                raise UsageError(f"limit {name} must be a positive number, not {getattr(self, name)}")


DEFAULT_LIMITS = Limits()


@dataclass
class _Cut:
    """Where the diff was cut (entry index) and the sentence that says why."""

    index: int
    why: Message | str


@dataclass
class _Stream:
    sections: dict[int, ParsedSection] = field(default_factory=dict)
    unattributed: list[str] = field(default_factory=list)  # errors of sections naming no file
    patch_bytes: int = 0
    cut: _Cut | None = None


class _Sums:
    """Sizes of the sections seen so far, by rank (a Fenwick tree): the prefix of the ranking that
    fits a limit, while git streams the sections in path order. A section's size only adds to the
    prefixes from its rank on, so the first rank over the limit can only move down as sections
    arrive: a section at or past it is never kept, and what is kept stays within the limit."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.tree = [0] * (n + 1)
        self.total = 0

    def add(self, index: int, value: int) -> None:
        self.total += value
        i = index + 1
        while i <= self.n:
            self.tree[i] += value
            i += i & -i

    def first_over(self, limit: int) -> int | None:
        """The lowest rank whose prefix sum (itself included) is over `limit`; None if none is."""
        if self.total <= limit:
            return None
        pos, left = 0, limit
        step = 1 << self.n.bit_length()
        while step:
            nxt = pos + step
            if nxt <= self.n and self.tree[nxt] <= left:
                pos = nxt
                left -= self.tree[nxt]
            step >>= 1
        return pos  # prefix up to rank pos-1 fits; rank pos is the first over


def _special(entry: DiffEntry) -> str | None:
    modes = (entry.old_mode, entry.new_mode)
    if SYMLINK_MODE in modes:
        return "symbolic link"
    if GITLINK_MODE in modes:
        return "submodule"
    return None


def _pre_skip(entry: DiffEntry, base: GitTree, head: GitTree, limit: int) -> Note | None:
    """Why a file must not be diffed or read at all, judged from the file list alone."""
    special = _special(entry)
    if special is not None:
        return skip_note(entry.path, SkipReason.UNAVAILABLE, detail=special)
    if (entry.old_path is not None and base.lacks(entry.old_path)) or (
        entry.status != "D" and head.lacks(entry.path)
    ):
        # Not in the repository (and not fetched): `git diff` would fail on it, so it is left out.
        return skip_note(entry.path, SkipReason.UNAVAILABLE, detail=msg("note.why.missing-object"))
    size = 0
    if entry.old_path is not None:
        size = base.size(entry.old_path) or 0
    if entry.status != "D":
        size = max(size, head.size(entry.path) or 0)
    if size > limit:
        return skip_note(entry.path, SkipReason.TOO_LARGE, size=size, limit=limit)
    return None


def _exclusions(entries: Sequence[DiffEntry]) -> list[str]:
    paths = {p for e in entries for p in (e.old_path, e.path) if p is not None}
    specs = [f":(exclude,literal){p}" for p in sorted(paths)]
    return specs if sum(len(s) for s in specs) <= _MAX_PATHSPEC_CHARS else []


def _stream(
    repo: Path, a: str, b: str, wanted: dict[str, int], excluded: Sequence[DiffEntry], limits: Limits
) -> _Stream:
    """Read git's patch file by file; keep the parsed sections of the best-ranked files that fit the
    diff limits together (`wanted` maps a path to its rank)."""
    out = _Stream()
    n = max(wanted.values(), default=-1) + 1
    sizes, lines_of = _Sums(n), _Sums(n)
    total_lines = 0
    cut: int | None = None
    over: str | None = None
    for raw in diff_patch_chunks(repo, a, b, _exclusions(excluded)):
        text = raw.decode("utf-8", "surrogateescape")
        header = parse_section(text, hunks=False)
        index = wanted.get(header.path or "")
        if index is None:
            if header.path is None:
                out.unattributed.append(header.error or "no file name")
            continue  # a skipped file, when the diff could not be narrowed by pathspecs
        lines = raw.count(b"\n")
        out.patch_bytes += len(raw)
        total_lines += lines
        sizes.add(index, len(raw))
        lines_of.add(index, lines)
        for why, first in (
            ("bytes", sizes.first_over(limits.max_diff_bytes)),
            ("lines", lines_of.first_over(limits.max_diff_lines)),
        ):
            if first is not None and (cut is None or first < cut):
                cut, over = first, why
                for kept in [i for i in out.sections if i >= first]:
                    del out.sections[kept]
        if cut is None or index < cut:
            out.sections[index] = parse_section(text)
    if cut is not None:
        if over == "bytes":
            why_text: Message | str = msg(
                "note.cut.bytes", size=human_size(out.patch_bytes), limit=human_size(limits.max_diff_bytes)
            )
        else:
            why_text = msg("note.cut.lines", lines=f"{total_lines:,}", limit=f"{limits.max_diff_lines:,}")
        out.cut = _Cut(cut, why_text)
    return out


def _file(entry: DiffEntry, section: ParsedSection | None) -> tuple[ChangedFile, Note | None]:
    """The record for one kept file, texts not yet read."""
    status = _STATUS.get(entry.status, FileStatus.MODIFIED)
    old_path = entry.old_path if status is not FileStatus.ADDED else None
    skipped: tuple[SkipReason, Note] | None = None
    if section is None:
        note = skip_note(entry.path, SkipReason.UNAVAILABLE, detail=msg("note.why.no-diff"))
        skipped = (SkipReason.UNAVAILABLE, note)
    elif section.error is not None:
        skipped = (SkipReason.UNPARSABLE_DIFF, unparsable_note(entry.path, section.error))
    elif (section.path, section.old_path, section.status) != (entry.path, old_path, status):
        error = "git's diff and its list of changed files disagree about this file"
        skipped = (SkipReason.UNPARSABLE_DIFF, unparsable_note(entry.path, error))
    elif section.binary:
        skipped = (SkipReason.BINARY, skip_note(entry.path, SkipReason.BINARY))
    # A section with bytes that are not UTF-8 (section.non_utf8) is kept: its hunks read them as U+FFFD,
    # and the file's texts decide (`_with_texts`) whether it is mostly undecodable and skipped.
    binary = section is not None and section.binary
    if skipped is not None:
        return ChangedFile(entry.path, old_path, status, (), None, None, binary, skipped[0]), skipped[1]
    assert section is not None
    return ChangedFile(entry.path, old_path, status, section.hunks, None, None, binary), None


def _with_texts(
    files: list[ChangedFile], notes: dict[str, Note], base: GitTree, head: GitTree
) -> list[ChangedFile]:
    """Fill base_text/head_text in two batches. A side that is binary or mostly not UTF-8 skips the
    file; a few undecodable bytes are read as U+FFFD and the file is analysed, with a note."""
    todo = [f for f in files if f.skipped is None]
    base_raw = base.read_bytes_many(f.old_path for f in todo if f.old_path is not None)
    head_raw = head.read_bytes_many(f.path for f in todo if f.status is not FileStatus.DELETED)
    out: list[ChangedFile] = []
    for f in files:
        if f.skipped is not None:
            out.append(f)
            continue
        texts: list[str | None] = []
        reason: SkipReason | None = None
        replaced = 0
        for raw, present in (
            (base_raw.get(f.old_path or ""), f.old_path is not None),
            (head_raw.get(f.path), f.status is not FileStatus.DELETED),
        ):
            if not present:
                texts.append(None)
                continue
            decoded = decode_bytes(raw) if raw is not None else SkipReason.UNAVAILABLE
            if isinstance(decoded, SkipReason):
                reason = reason or decoded
                texts.append(None)
            else:
                texts.append(decoded.text)
                replaced = max(replaced, decoded.replaced)
        if reason is None and replaced:
            notes[f.path] = replaced_note(f.path, replaced)
        if reason is not None:
            notes[f.path] = skip_note(f.path, reason)
            out.append(
                ChangedFile(
                    f.path,
                    f.old_path,
                    f.status,
                    (),
                    None,
                    None,
                    f.binary or reason is SkipReason.BINARY,
                    reason,
                )
            )
        else:
            out.append(ChangedFile(f.path, f.old_path, f.status, f.hunks, texts[0], texts[1], f.binary))
    return out


def load_change(repo: Path, base: str, head: str, limits: Limits = DEFAULT_LIMITS) -> ChangeSet:
    """The change a pull request from `head` into `base` shows: merge-base(base, head) -> head.

    Raises EnvironmentProblem for a missing git, a non-repository or an unknown revision, and
    GitError when git fails. The returned ChangeSet holds GitTrees of head and of the merge base
    (`head_tree`, `base_tree`) for reading the whole repository; `close()` it when done.
    """
    base_sha, head_sha = resolve(repo, base), resolve(repo, head)
    mb = merge_base(repo, base_sha, head_sha)
    listed = diff_raw(repo, mb, head_sha)
    # Best-ranked first (sort is stable: path order within a rank), so every limit below cuts
    # the padding before the change it hides.
    entries = sorted(listed, key=lambda e: rank(e.path))
    head_tree = GitTree(repo, head_sha, limits.max_file_bytes)
    base_tree = GitTree(repo, mb, limits.max_file_bytes)
    try:
        # Both listings (git ls-tree -r of each side, the larger part of this stage on a large tree)
        # run side by side: git does the work, these threads only wait.
        with ThreadPoolExecutor(2, thread_name_prefix="git-ls-tree") as pool:
            list(pool.map(GitTree.paths, (head_tree, base_tree)))
        # A partial clone fetches what the diff needs, in one request per side; nothing else.
        capped = entries[: limits.max_files]
        base_tree.fetch(e.old_path for e in capped if e.old_path is not None)
        head_tree.fetch(e.path for e in capped if e.status != "D")
        position = {e.path: i for i, e in enumerate(listed)}
        files, notes, truncated, patch_bytes = _build(
            repo, mb, head_sha, entries, limits, base_tree, head_tree, position
        )
    except BaseException:
        head_tree.close()
        base_tree.close()
        raise
    return ChangeSet(
        base_sha,
        head_sha,
        mb,
        files,
        patch_bytes,
        truncated is not None,
        notes,
        head_tree=head_tree,
        base_tree=base_tree,
        files_left_out=len(entries) - len(files),
        left_out=tuple(e.path for e in entries[len(files) :]),
    )


def _build(
    repo: Path,
    mb: str,
    head: str,
    entries: list[DiffEntry],
    limits: Limits,
    base: GitTree,
    head_tree: GitTree,
    position: dict[str, int],
) -> tuple[list[ChangedFile], list[Note], _Cut | None, int]:
    capped = entries[: limits.max_files]
    pre = {i: n for i, e in enumerate(capped) if (n := _pre_skip(e, base, head_tree, limits.max_file_bytes))}
    wanted = {e.path: i for i, e in enumerate(capped) if i not in pre}
    excluded = [e for i, e in enumerate(entries) if i in pre or i >= limits.max_files]
    stream = _Stream()
    if wanted:
        stream = _stream(repo, mb, head, wanted, excluded, limits)
    cut = stream.cut
    if cut is None and len(entries) > limits.max_files:
        cut = _Cut(
            limits.max_files,
            f"the change has {len(entries):,} files, over the {limits.max_files:,}-file limit",
        )
    kept = entries[: cut.index] if cut else entries
    files, notes_by_path = _records(kept, pre, stream)
    files = _with_texts(files, notes_by_path, base, head_tree)
    files.sort(key=lambda f: position.get(f.path, 0))  # git's order, whatever the ranking was
    notes = [notes_by_path[f.path] for f in files if f.path in notes_by_path]
    notes += [unparsable_note(None, error) for error in stream.unattributed]
    touched = {p for e in entries for p in (e.old_path, e.path) if p is not None}
    absent = [p for p in dict.fromkeys([*head_tree.missing(), *base.missing()]) if p not in touched]
    if absent:
        notes.append(missing_note(absent))
    if cut is not None:
        notes.append(_truncated_note(entries, cut))
    return files, notes, cut, stream.patch_bytes


def _records(
    kept: list[DiffEntry], pre: dict[int, Note], stream: _Stream
) -> tuple[list[ChangedFile], dict[str, Note]]:
    """A record per kept entry (skipped before reading: no hunks) and the notes of those not analysed."""
    notes_by_path: dict[str, Note] = {}
    files: list[ChangedFile] = []
    for i, entry in enumerate(kept):
        if i in pre:
            reason = pre[i].reason
            status = _STATUS.get(entry.status, FileStatus.MODIFIED)
            old_path = entry.old_path if status is not FileStatus.ADDED else None
            files.append(ChangedFile(entry.path, old_path, status, (), None, None, skipped=reason))
            notes_by_path[entry.path] = pre[i]
            continue
        changed, note = _file(entry, stream.sections.get(i))
        files.append(changed)
        if note is not None:
            notes_by_path[entry.path] = note
    return files, notes_by_path


def _truncated_note(entries: list[DiffEntry], cut: _Cut) -> Note:
    """The note that says where the change was cut and how many files were left out."""
    left = len(entries) - cut.index
    return Note.of(
        SkipReason.TRUNCATED,
        msg(
            "note.truncated",
            why=cut.why,
            left=f"{left:,}",
            total=f"{len(entries):,}",
            path=entries[cut.index].path,
        ),
    )
