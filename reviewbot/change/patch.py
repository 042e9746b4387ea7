"""Unified diff text turned into ChangedFile records (hunks and statuses; no file texts).

The parser never raises on bad input: a section it cannot read becomes a Note with
SkipReason.UNPARSABLE_DIFF, and the sections around it are still parsed. A git diff is cut into
one section per "diff --git" line so one malformed file cannot take the others with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from reviewbot.change.notes import skip_note, unparsable_note
from reviewbot.model.change import ChangedFile, FileStatus, Hunk, Note, SkipReason

__all__ = ["ParsedSection", "parse_patch", "parse_section", "split_sections"]

_GIT_HEADER = "diff --git "
_DEV_NULL = "/dev/null"
_PREFIX = re.compile(r"[abciow12]/")  # a/ b/, mnemonic prefixes, and --no-index's 1/ 2/
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_SURROGATE = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8 (surrogateescape)
_SPECIAL_MODES = {"120000": "symbolic link", "160000": "submodule"}


@dataclass(frozen=True)
class ParsedSection:
    """One file's part of a diff, as far as it could be read."""

    path: str | None  # new path; old path for deletions; None when no name could be read
    old_path: str | None
    status: FileStatus
    hunks: tuple[Hunk, ...] = ()
    binary: bool = False
    special: str | None = None  # "symbolic link" / "submodule"
    non_utf8: bool = False
    error: str | None = None


def split_sections(text: str) -> list[str]:
    """Cut a git diff before every "diff --git" line (text before the first one is its own part)."""
    starts = [0] + [m.start() + 1 for m in re.finditer("\n" + re.escape(_GIT_HEADER), text)]
    parts = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    return [p for p in parts if p]


def _unquote(name: str) -> str:
    """Undo git's C-style quoting of a path ("a/\\303\\251.txt" -> "a/é.txt")."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    out = bytearray()
    body, i = name[1:-1], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if body[i + 1 : i + 4].isdigit():
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
        out += c.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _strip_prefix(name: str | None) -> str | None:
    if name is None or name == _DEV_NULL:
        return None
    return name[2:] if _PREFIX.match(name) else name


def _quoted_end(value: str) -> int:
    """Index of the quote closing the C-quoted name `value` starts with, or -1."""
    i = 1
    while i < len(value):
        if value[i] == "\\":
            i += 2
            continue
        if value[i] == '"':
            return i
        i += 1
    return -1


def _file_name(value: str) -> str:
    """The path of a ---/+++ line (a tab starts a timestamp unless the name is quoted)."""
    if value.startswith('"') and (end := _quoted_end(value)) != -1:
        return _unquote(value[: end + 1])
    return value.split("\t", 1)[0]


def _git_header_names(rest: str) -> tuple[str | None, str | None]:
    """The two names of "diff --git A B"; like git, assume both are the same when unquoted."""
    if rest.startswith('"') and (end := _quoted_end(rest)) != -1:
        return _unquote(rest[: end + 1]), _unquote(rest[end + 2 :])
    if rest.endswith('"') and ' "' in rest:
        first, _, second = rest.partition(' "')
        return first, _unquote('"' + second)
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[2:half] == rest[half + 3 :]:
        return rest[:half], rest[half + 1 :]
    first, sep, second = rest.partition(" b/")
    return (first, "b/" + second) if sep else (None, None)


def _strip_eol(value: str) -> str:
    if value.endswith("\n"):
        value = value[:-1]
    return value[:-1] if value.endswith("\r") else value


def _text(value: str) -> str:
    return _SURROGATE.sub("\ufffd", _strip_eol(value))


def _hunks(patched: PatchedFile, headers: list[str]) -> tuple[Hunk, ...]:
    out: list[Hunk] = []
    for i, h in enumerate(patched):
        header = (
            headers[i]
            if len(headers) == len(patched)
            else (f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@")
        )
        # A byte that is not UTF-8 reads as U+FFFD, as in the file's text (change.blobs.decode_bytes).
        added = tuple((ln.target_line_no or 0, _text(ln.value)) for ln in h if ln.is_added)
        removed = tuple((ln.source_line_no or 0, _text(ln.value)) for ln in h if ln.is_removed)
        header = _SURROGATE.sub("\ufffd", header)
        out.append(
            Hunk(h.source_start, h.source_length, h.target_start, h.target_length, header, added, removed)
        )
    return tuple(out)


def _stray_line(text: str, patched: PatchedFile) -> str | None:
    """The first line after the first hunk that belongs to no hunk (unidiff skips those silently)."""
    in_hunks = {ln.diff_line_no for h in patched for ln in h}
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.startswith("@@ ")), len(lines))
    for i in range(first, len(lines)):
        line = lines[i]
        if line == "-- ":
            break  # the signature that ends `git format-patch` mail
        if i + 1 in in_hunks or not line or line.startswith(("@@ ", "\\")):
            continue
        return repr(line[:60])
    return None


def _unidiff(text: str) -> PatchSet | str:
    # unidiff raises several exception types on malformed input (its own parse error, but also
    # ValueError and friends); every one of them means "this text is not a diff we can read".
    try:
        return PatchSet(text)
    except UnidiffParseError as exc:
        return str(exc) or "malformed diff"
    except Exception as exc:  # noqa: BLE001 - see above
        return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def parse_section(text: str, *, hunks: bool = True) -> ParsedSection:
    """Parse one file's section of a git diff (from its "diff --git" line to the next).

    With `hunks=False` only the header is read (names, status, modes): cheap even for a huge
    section, for a caller that first decides whether it wants the file at all.
    """
    first_hunk = text.find("\n@@ ")
    header = text if first_hunk == -1 else text[:first_hunk]
    names, modes, binary = _read_header(header)
    old, new, status = _names_and_status(names, modes)
    path = new or old
    special = next((_SPECIAL_MODES[m] for m in modes.values() if m in _SPECIAL_MODES), None)
    found = ParsedSection(path, old, status, binary=binary, special=special)
    if path is None:
        return replace(found, error="no file name in the section header")
    if not hunks:
        return found
    found = replace(found, non_utf8=_SURROGATE.search(text) is not None)
    if binary or first_hunk == -1:
        return found
    return _with_hunks(found, text)


def _read_header(header: str) -> tuple[dict[str, str | None], dict[str, str], bool]:
    """The names (git header, rename/copy, ---/+++), the modes and whether the file is binary."""
    names: dict[str, str | None] = {}
    modes: dict[str, str] = {}
    binary = False
    for line in header.split("\n"):
        key, _, value = line.partition(" ")
        if line.startswith(_GIT_HEADER):
            names["git_old"], names["git_new"] = _git_header_names(line[len(_GIT_HEADER) :])
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            names[line.split(" ", 2)[1]] = _unquote(line.split(" ", 2)[2])
        elif line.startswith(("old mode ", "new mode ", "deleted file mode ", "new file mode ", "index ")):
            modes[line.rsplit(" ", 1)[0]] = line.rsplit(" ", 1)[1]
        elif key in ("---", "+++") and value:
            names[key] = _file_name(value)
        elif line == "GIT binary patch" or (line.startswith("Binary files ") and line.endswith(" differ")):
            binary = True
            break
    return names, modes, binary


def _names_and_status(
    names: dict[str, str | None], modes: dict[str, str]
) -> tuple[str | None, str | None, FileStatus]:
    """(old path, new path, status) from a section header's names and modes."""
    old = names.get("from") or _strip_prefix(names.get("---", names.get("git_old")))
    new = names.get("to") or _strip_prefix(names.get("+++", names.get("git_new")))
    if "new file mode" in modes or names.get("---") == _DEV_NULL:
        old, status = None, FileStatus.ADDED
    elif "deleted file mode" in modes or names.get("+++") == _DEV_NULL:
        new, status = None, FileStatus.DELETED
    elif "from" in names or "to" in names:
        status = FileStatus.RENAMED
    else:
        status = FileStatus.MODIFIED
    return old, new, status


def _with_hunks(found: ParsedSection, text: str) -> ParsedSection:
    """`found` with the hunks of its section's text, or the error that stops reading them."""
    parsed = _unidiff(text)
    if isinstance(parsed, str):
        return replace(found, error=parsed)
    if len(parsed) != 1:
        return replace(found, error=f"expected one file, found {len(parsed)}")
    stray = _stray_line(text, parsed[0])
    if stray is not None:
        return replace(found, error=f"unexpected text after the hunks: {stray}")
    headers = [ln for ln in text.split("\n") if ln.startswith("@@ ")]
    return replace(found, hunks=_hunks(parsed[0], headers))


def to_changed_file(section: ParsedSection) -> tuple[ChangedFile | None, Note | None]:
    """The record (texts still None) and, when it cannot be analysed, the note that says why."""
    if section.path is None:
        return None, unparsable_note(None, section.error or "unknown error")
    reason: SkipReason | None = None
    note: Note | None = None
    if section.error is not None:
        reason, note = SkipReason.UNPARSABLE_DIFF, unparsable_note(section.path, section.error)
    elif section.special is not None:
        reason = SkipReason.UNAVAILABLE
        note = skip_note(section.path, reason, detail=section.special)
    elif section.binary or section.non_utf8:
        reason = SkipReason.BINARY if section.binary else SkipReason.NON_UTF8
        note = skip_note(section.path, reason)
    hunks = section.hunks if reason is None else ()
    changed = ChangedFile(
        section.path,
        section.old_path,
        section.status,
        hunks,
        None,
        None,
        binary=section.binary,
        skipped=reason,
    )
    return changed, note


def _plain_sections(text: str) -> list[ParsedSection] | str:
    """A diff without "diff --git" lines (diff -u, or headers made up for a GitHub patch)."""
    parsed = _unidiff(text)
    if isinstance(parsed, str):
        return parsed
    headers = iter([ln for ln in text.split("\n") if ln.startswith("@@ ")])
    out: list[ParsedSection] = []
    for pf in parsed:
        old = _strip_prefix(_file_name(pf.source_file))
        new = _strip_prefix(_file_name(pf.target_file))
        if old is None:
            status = FileStatus.ADDED
        elif new is None:
            status = FileStatus.DELETED
        else:
            status = FileStatus.MODIFIED
        own_headers = [h for _, h in zip(pf, headers, strict=False)]
        out.append(
            ParsedSection(
                new or old,
                old,
                status,
                _hunks(pf, own_headers),
                binary=pf.is_binary_file,
                non_utf8=_SURROGATE.search(str(pf)) is not None,
            )
        )
    return out


def _github_section(text: str, path: str, old_path: str | None, status: FileStatus | None) -> ParsedSection:
    """The hunks of one file without headers (GitHub's `patch` field); names come from the caller."""
    given = status or FileStatus.MODIFIED
    old = None if given is FileStatus.ADDED else (old_path or path)
    empty = ParsedSection(path, old, given)
    if not text.strip():
        return empty  # a pure rename, a mode change, or a patch GitHub chose not to send
    src = _DEV_NULL if old is None else f"a/{old}"
    dst = _DEV_NULL if given is FileStatus.DELETED else f"b/{path}"
    framed = f"--- {src}\n+++ {dst}\n{text}"
    sections = _plain_sections(framed)
    if isinstance(sections, str):
        return replace(empty, error=sections)
    if len(sections) != 1:
        return replace(empty, error=f"expected one file, found {len(sections)}")
    parsed = _unidiff(framed)
    assert not isinstance(parsed, str)  # _plain_sections parsed the same text
    stray = _stray_line(framed, parsed[0])
    if stray is not None:
        return replace(empty, error=f"unexpected text after the hunks: {stray}")
    return replace(empty, hunks=sections[0].hunks, non_utf8=sections[0].non_utf8)


def parse_patch(
    text: str,
    *,
    path: str | None = None,
    old_path: str | None = None,
    status: FileStatus | None = None,
) -> tuple[list[ChangedFile], list[Note]]:
    """Parse a unified diff into ChangedFiles (base_text/head_text left None) and Notes.

    `text` is a git diff, a plain `diff -u`, or - with `path` given - the hunks of one file
    without any header (the `patch` field of GitHub's pull-request files API); then `old_path`
    (for renames) and `status` describe that file. Never raises: what cannot be parsed becomes a
    Note with SkipReason.UNPARSABLE_DIFF, and every file that could be parsed is still returned.
    """
    files: list[ChangedFile] = []
    notes: list[Note] = []
    if path is not None and (not text.strip() or text.startswith("@@ ")):
        # GitHub's per-file patch starts with its first hunk (a removed "-- comment" line would
        # look like a "--- " header further down, so only the start can tell).
        sections = [_github_section(text, path, old_path, status)]
    elif re.search(r"^diff --git ", text, re.MULTILINE):
        # Text before the first file (a commit message, a mail header) is not part of any file.
        sections = [parse_section(s) for s in split_sections(text) if s.startswith(_GIT_HEADER)]
    else:
        plain = _plain_sections(text)
        if isinstance(plain, str):
            return files, [unparsable_note(None, plain)]
        sections = plain
        if not sections and text.strip():
            return files, [unparsable_note(None, "no file header found; this is not a unified diff")]
    for section in sections:
        changed, note = to_changed_file(section)
        if changed is not None:
            files.append(changed)
        if note is not None:
            notes.append(note)
    return files, notes
