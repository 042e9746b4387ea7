"""Per-test results from JUnit XML files written by a test run."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from reviewbot.model.tests import TestCase

__all__ = ["TestCase", "parse_junit", "belongs_to"]

# Larger reports are skipped rather than parsed: they come from the code under review.
_MAX_BYTES = 32 << 20


def _outcome(case: ET.Element) -> str:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    if "skipped" in tags:
        return "skipped"
    return "passed"


def parse_junit(paths: Iterable[Path]) -> tuple[dict[str, TestCase], list[str]]:
    """Test cases by id from the given JUnit files, and problems with files that could not be read."""
    cases: dict[str, TestCase] = {}
    problems: list[str] = []
    for path in sorted(paths):
        try:
            if path.stat().st_size > _MAX_BYTES:
                problems.append(f"{path.name}: larger than {_MAX_BYTES >> 20} MiB, skipped")
                continue
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        if root.tag not in ("testsuites", "testsuite"):
            continue
        for case in root.iter("testcase"):
            classname = case.get("classname", "")
            name = case.get("name", "")
            tc = TestCase(
                id=f"{classname}::{name}" if classname else name,
                outcome=_outcome(case),
                classname=classname,
                name=name,
                file=case.get("file", ""),
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
