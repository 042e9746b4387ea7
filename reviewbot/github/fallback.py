"""The change of a PR from the API alone, for when git cannot fetch it.

`pulls/{n}/files` gives each file's hunks (`patch`); the head text of a changed file is read from
the contents API and the base text is rebuilt by undoing the hunks on it, so the checks still see
whole changed files. What this cannot see is said in Notes (and so in the report): the rest of the
repository (no repository-wide search: other writers, read sites, tests elsewhere), files GitHub
sent no patch for (binary, or over its per-file limit), files beyond the first `max_files` or
beyond GitHub's 3000-file listing.
"""

from __future__ import annotations

import base64
import logging
from urllib.parse import quote

from reviewbot.change.patch import parse_patch
from reviewbot.change.tree import decode_text
from reviewbot.github.api import PullFile, PullRequestInfo, RestApi
from reviewbot.github.client import ApiError
from reviewbot.model.change import ChangedFile, ChangeSet, FileStatus, Hunk, Note, SkipReason

__all__ = ["change_from_api", "undo_hunks", "MAX_FILES"]

log = logging.getLogger(__name__)
MAX_FILES = 20  # whole texts are fetched for this many changed files (one request each)
GITHUB_FILE_CAP = 3000
_STATUS = {
    "added": FileStatus.ADDED,
    "removed": FileStatus.DELETED,
    "renamed": FileStatus.RENAMED,
    "copied": FileStatus.ADDED,
}


def undo_hunks(head_text: str, hunks: tuple[Hunk, ...]) -> str | None:
    """The base text of a file whose head text and hunks are known; None if they do not fit together."""
    head = head_text.split("\n")
    trailing_newline = head_text.endswith("\n")
    if trailing_newline:
        head = head[:-1]
    out: list[str] = []
    at = 1  # next head line (1-based) not yet copied
    for h in hunks:
        start = h.target_start if h.target_length > 0 else h.target_start + 1
        if start < at or start - 1 > len(head):
            return None
        out.extend(head[at - 1 : start - 1])
        added = {n for n, _ in h.added}
        context = [
            head[n - 1] for n in range(start, start + h.target_length) if n not in added and n <= len(head)
        ]
        removed = dict(h.removed)
        first = h.source_start if h.source_length > 0 else h.source_start + 1
        for b in range(first, first + h.source_length):
            if b in removed:
                out.append(removed[b])
            elif context:
                out.append(context.pop(0))
            else:
                return None
        if context:
            return None
        at = start + h.target_length
    out.extend(head[at - 1 :])
    text = "\n".join(out)
    return text + "\n" if trailing_newline and out else text


def _decode(data: bytes) -> str | None:
    """The text, stray non-UTF-8 bytes read as U+FFFD as in a clone; None when binary or mostly not UTF-8."""
    text = decode_text(data)
    return None if isinstance(text, SkipReason) else text


def _head_text(api: RestApi, pr: PullRequestInfo, path: str) -> tuple[str | None, SkipReason | None]:
    try:
        _, data = api.client.request(
            "GET",
            # Each segment percent-encoded, `/` kept: a `#`, `?` or `%` in a file name would
            # otherwise end the path (or be read as an escape) and fetch another file or none.
            f"/repos/{pr.repo}/contents/{quote(path, safe='/')}",
            label="GET contents/{path}",
            params={"ref": pr.head_sha},
        )
    except ApiError as exc:
        if exc.status in (403, 404):
            return None, SkipReason.UNAVAILABLE
        raise
    if not isinstance(data, dict) or data.get("encoding") != "base64" or data.get("content") is None:
        return None, SkipReason.TOO_LARGE  # over 1 MB the contents API sends no content
    text = _decode(base64.b64decode(str(data["content"])))
    return (text, None) if text is not None else (None, SkipReason.NON_UTF8)


def _one(api: RestApi, pr: PullRequestInfo, f: PullFile, fetch: bool) -> tuple[list[ChangedFile], list[Note]]:
    status = _STATUS.get(f.status, FileStatus.MODIFIED)
    if f.patch is None:
        reason = SkipReason.BINARY if f.additions == 0 and f.deletions == 0 else SkipReason.TRUNCATED
        why = "GitHub sent no patch for it (binary, or over GitHub's per-file diff limit)"
        changed = ChangedFile(
            f.filename, f.previous_filename, status, (), None, None, reason is SkipReason.BINARY, reason
        )
        return [changed], [Note(reason, f"{f.filename}: {why}; not analysed", f.filename)]
    files, notes = parse_patch(f.patch, path=f.filename, old_path=f.previous_filename, status=status)
    if not fetch:
        return files, notes
    out: list[ChangedFile] = []
    for cf in files:
        head_text: str | None = None
        if cf.status is not FileStatus.DELETED:
            head_text, skip = _head_text(api, pr, cf.path)
            if skip is not None:
                notes.append(
                    Note(
                        skip,
                        f"{cf.path}: its head text could not be read from the API; only the diff "
                        "lines were analysed",
                        cf.path,
                    )
                )
        if cf.status is FileStatus.DELETED:
            base_text: str | None = "\n".join(t for _, t in cf.removed_lines.items()) + "\n"
        elif cf.status is FileStatus.ADDED:
            base_text = None
        else:
            base_text = undo_hunks(head_text, cf.hunks) if head_text is not None else None
            if head_text is not None and base_text is None:
                notes.append(
                    Note(
                        SkipReason.UNAVAILABLE,
                        f"{cf.path}: the base text could not be rebuilt from the patch",
                        cf.path,
                    )
                )
        out.append(
            ChangedFile(
                cf.path, cf.old_path, cf.status, cf.hunks, base_text, head_text, cf.binary, cf.skipped
            )
        )
    return out, notes


def change_from_api(
    api: RestApi, pr: PullRequestInfo, reason: str, *, max_files: int = MAX_FILES
) -> ChangeSet:
    """A ChangeSet built from `pulls/{n}/files` (+ the contents API); `reason` says why git was not used."""
    listed = api.list_pull_files(pr.repo, pr.number)
    files: list[ChangedFile] = []
    notes: list[Note] = [
        Note(
            SkipReason.UNAVAILABLE,
            f"Reviewed from GitHub's API patches because the code could not be fetched with git ({reason}). "
            "The rest of the repository was not available: other writers, read sites and tests outside the "
            "changed files were not searched.",
        )
    ]
    for i, f in enumerate(listed):
        more, more_notes = _one(api, pr, f, fetch=i < max_files)
        files.extend(more)
        notes.extend(more_notes)
    if len(listed) > max_files:
        notes.append(
            Note(
                SkipReason.UNAVAILABLE,
                f"Whole texts were read for the first {max_files} of "
                f"{len(listed)} changed files; the others only as diff lines.",
            )
        )
    left_out = max(pr.changed_files - len(listed), 0)
    truncated = left_out > 0 or len(listed) >= GITHUB_FILE_CAP
    if truncated:
        notes.append(
            Note(
                SkipReason.TRUNCATED,
                f"GitHub listed {len(listed)} of the PR's {pr.changed_files} "
                "changed files (its API lists at most 3000); the rest were not "
                "reviewed.",
            )
        )
    patch_bytes = sum(len((f.patch or "").encode()) for f in listed)
    log.info("%s #%d: %d file(s) from the API (%s)", pr.repo, pr.number, len(listed), reason)
    return ChangeSet(
        pr.base_sha, pr.head_sha, pr.base_sha, files, patch_bytes, truncated, notes, files_left_out=left_out
    )
