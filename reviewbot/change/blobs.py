"""A commit's blobs as git lists them (modes, `ls-tree` records) and their bytes as text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from reviewbot.change.gitproc import decode_path
from reviewbot.model.change import SkipReason

__all__ = [
    "BINARY_SNIFF_BYTES",
    "GITLINK_MODE",
    "MAX_UNDECODABLE_SHARE",
    "REGULAR_MODES",
    "SYMLINK_MODE",
    "Blob",
    "Decoded",
    "decode_bytes",
    "decode_text",
    "ls_tree_records",
]

# git's own rule for "is this binary" (xdiff's FIRST_FEW_BYTES): a NUL byte in the first 8000
# bytes. Using the same figure keeps GitTree and `git diff` in agreement about every file.
BINARY_SNIFF_BYTES = 8000

REGULAR_MODES = frozenset({"100644", "100755"})
SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"


# A file is skipped as not UTF-8 only when more than this share of its bytes cannot be decoded: it is
# mostly something else (binary without a NUL early on, another encoding throughout). A few stray bytes
# (a Latin-1 name in a comment, a GBK comment line) are read as U+FFFD and the file is analysed.
MAX_UNDECODABLE_SHARE = 0.5

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # a byte surrogateescape could not decode


@dataclass(frozen=True)
class Decoded:
    """The text of a blob; `replaced` bytes were not UTF-8 and each reads as U+FFFD."""

    text: str
    replaced: int = 0


def decode_bytes(data: bytes) -> Decoded | SkipReason:
    """The text of a blob with undecodable bytes replaced (one U+FFFD per byte, the same as a diff
    of the file shows them), or why it is not analysable text: BINARY (a NUL byte where git looks for
    one) or NON_UTF8 (more than `MAX_UNDECODABLE_SHARE` of its bytes are not UTF-8)."""
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SkipReason.BINARY
    try:
        return Decoded(data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    text, replaced = _ESCAPED_BYTE.subn("\ufffd", data.decode("utf-8", "surrogateescape"))
    if replaced > MAX_UNDECODABLE_SHARE * len(data):
        return SkipReason.NON_UTF8
    return Decoded(text, replaced)


def decode_text(data: bytes) -> str | SkipReason:
    """The text of a blob (see `decode_bytes`), or why it is not analysable text."""
    decoded = decode_bytes(data)
    return decoded if isinstance(decoded, SkipReason) else decoded.text


@dataclass(frozen=True)
class Blob:
    """One file of a listed tree (size -1: its object is missing from the repository)."""

    mode: str
    sha: str
    size: int


def ls_tree_records(out: bytes, *, sized: bool) -> Iterator[tuple[str, str, str, str]]:
    """(path, mode, sha, size or "") of the regular files in `git ls-tree -r -z [-l]` output.

    Symlinks and submodules are not source files: their "content" is a target path or a commit id."""
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        fields = meta.decode("ascii").split()
        mode, kind, sha = fields[:3]
        if kind == "blob" and mode in REGULAR_MODES:
            yield decode_path(raw_path), mode, sha, fields[3] if sized else ""
