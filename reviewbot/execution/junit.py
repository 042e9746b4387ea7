"""Per-test results from JUnit XML files written by a test run.

The files come out of the sandbox: the code under review wrote them, so they are untrusted input.
A file is read only when every directory on its way and the file itself are real (no symbolic link
is followed: a `build` link to a host directory must not make the worker read host XML), it is a
regular file with one link, and it lies inside the run directory (`root`). Test names are capped,
their control characters escaped and any value of the worker's secret-looking environment variables
redacted (`reviewbot.model.untrusted`) before they become ids that findings and reports show.
"""

from __future__ import annotations

import errno
import os
import stat
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from reviewbot.model.tests import TestCase
from reviewbot.model.untrusted import secret_values, untrusted_name

__all__ = ["TestCase", "parse_junit", "belongs_to", "open_inside", "MAX_NAME_CHARS"]

# Larger reports are skipped rather than parsed: they come from the code under review.
_MAX_BYTES = 32 << 20
# A test's classname, name and file attribute are cut to this many characters (with a hash of the rest).
MAX_NAME_CHARS = 240


class UnsafeFile(OSError):
    """A JUnit candidate that must not be read (a link, not a regular file, outside the run)."""


def open_inside(path: Path, root: Path | None = None) -> int:
    """A read-only descriptor of the regular file `path`, reached without following a symbolic link.

    With `root`, `path` must lie inside it and the walk starts there; without, it starts at `/`, so
    no component of the absolute path may be a link (callers resolve their run directory first).
    Raises UnsafeFile (an OSError) saying why the file is not read.
    """
    target = Path(os.path.abspath(path))
    if root is not None:
        base = Path(os.path.abspath(root))
        try:
            parts = target.relative_to(base).parts
        except ValueError:
            raise UnsafeFile("outside the run directory; not read") from None
    else:
        base, parts = Path(target.anchor or "/"), target.parts[1:]
    if not parts:
        raise UnsafeFile("not a file; not read")
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(base, os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafeFile(f"reached through the symbolic link {part!r}; not read") from None
                raise
            os.close(fd)
            fd = inner
        try:
            leaf = os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)  # a FIFO must not block
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFile("a symbolic link; not read") from None
            raise
    finally:
        os.close(fd)
    info = os.fstat(leaf)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(leaf)
        why = "not a regular file" if not stat.S_ISREG(info.st_mode) else "a hard link to another file"
        raise UnsafeFile(f"{why}; not read")
    return leaf


def _read(path: Path, root: Path | None) -> bytes | str:
    """The file's bytes, or why they were not read."""
    try:
        fd = open_inside(path, root)
    except OSError as exc:
        return str(exc) if isinstance(exc, UnsafeFile) else (exc.strerror or str(exc))
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        return f"larger than {_MAX_BYTES >> 20} MiB, skipped"
    return data


def _outcome(case: ET.Element) -> str:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    # GoogleTest marks a disabled test status="notrun" (no child) and GTEST_SKIP result="skipped".
    if "skipped" in tags or case.get("status") == "notrun" or case.get("result") == "skipped":
        return "skipped"
    return "passed"


def parse_junit(paths: Iterable[Path], root: Path | None = None) -> tuple[dict[str, TestCase], list[str]]:
    """Test cases by id from the given JUnit files, and problems with files that could not be read.

    `root`: the run directory every file must lie in (see `open_inside`); names are made safe to show.
    """
    cases: dict[str, TestCase] = {}
    problems: list[str] = []
    secrets = secret_values()

    def safe(value: str) -> str:
        return untrusted_name(value, MAX_NAME_CHARS, secrets=secrets)

    for path in sorted(paths):
        shown = safe(
            str(path.relative_to(root)) if root is not None and path.is_relative_to(root) else path.name
        )
        data = _read(path, root)
        if isinstance(data, str):
            problems.append(f"{shown}: {safe(data)}")
            continue
        try:
            root_element = ET.fromstring(data)
        except ET.ParseError as exc:
            problems.append(f"{shown}: {safe(str(exc))}")
            continue
        if root_element.tag not in ("testsuites", "testsuite"):
            continue
        for case in root_element.iter("testcase"):
            classname = safe(case.get("classname", ""))
            name = safe(case.get("name", ""))
            tc = TestCase(
                id=f"{classname}::{name}" if classname else name,
                outcome=_outcome(case),
                classname=classname,
                name=name,
                file=safe(case.get("file", "")),
            )
            prior = cases.get(tc.id)
            # A test reported twice (reruns, two suites) counts as failed if any report failed.
            if prior is None or (tc.failed and not prior.failed):
                cases[tc.id] = tc
    return cases, problems


def belongs_to(case: TestCase, path: str) -> bool:
    """Whether the test case comes from the test file at repository path `path`."""
    if case.file:
        return case.file.removeprefix("./") == path
    stem = path.rsplit(".", 1)[0] if "." in Path(path).name else path
    module = stem.split("/")
    dotted = case.classname.split(".")

    # pytest names the module relative to its rootdir: the repository root (classname starts with the
    # module path), a sub-directory with its own config (the module path ends with the classname's
    # module part) or a directory above the checkout (the classname contains the module path).
    def classes(rest: list[str]) -> bool:  # what follows the module in a classname: test classes
        return all(part[:1].isupper() for part in rest)

    for k in range(len(dotted), 0, -1):
        if module[-k:] == dotted[:k] and classes(dotted[k:]):
            return True
    n = len(module)
    if any(dotted[i : i + n] == module and classes(dotted[i + n :]) for i in range(1, len(dotted) - n + 1)):
        return True
    return module[-1] in (case.classname, case.name)
