"""Helpers for the deeper-derivation tests: review a fixture case or the bundled example for real and
keep the CheckContext the checks saw (captured by a check that reports nothing)."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.change.diff import load_change
from reviewbot.checks.base import CheckContext
from reviewbot.example import EXAMPLE_DIR
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import Review
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.checks.fixtures import FIXTURES, build_case
from tests.gitrepo import Repo


@dataclass
class Capture:
    """A check that reports nothing and keeps the context it was given."""

    id: str = "capture"
    severity: Severity = Severity.P3
    summary: str = "keeps the context"
    seen: list[CheckContext] = field(default_factory=list)

    def run(self, ctx: CheckContext) -> Iterable[Finding]:
        self.seen.append(ctx)
        return []


@dataclass(frozen=True)
class Reviewed:
    review: Review
    ctx: CheckContext

    def findings(self, rule: str) -> list[Finding]:
        return [f for f in self.review.findings if f.rule == rule]


def review_repo(repo: Repo, base: str, head: str) -> Reviewed:
    capture = Capture()
    review = review_change(load_change(repo.path, base, head), ReviewSettings(extra_checks=(capture,)))
    assert capture.seen, "the pipeline never ran its checks"
    return Reviewed(review, capture.seen[-1])


def review_fixture(rule: str, case: str, dest: Path) -> Reviewed:
    repo, base, head = build_case(FIXTURES / rule / case, dest)
    return review_repo(repo, base, head)


def example_repo(dest: Path, patch_base: Iterable[tuple[str, str, str]] = ()) -> tuple[Repo, str, str]:
    """The bundled example's base and first round as a git repository; `patch_base` replaces text in
    base files ((path, old, new)) before the base commit, so base and head both carry the change."""
    repo = Repo(dest)
    shutil.copytree(EXAMPLE_DIR / "base", dest, dirs_exist_ok=True)
    for rel, old, new in patch_base:
        text = (dest / rel).read_text()
        assert old in text, f"{rel}: {old!r} not found"
        (dest / rel).write_text(text.replace(old, new))
    base = repo.commit({}, "base")
    repo.checkout("pr", create=True)
    shutil.copytree(EXAMPLE_DIR / "round1", dest, dirs_exist_ok=True)
    head = repo.commit({}, "round 1")
    return repo, base, head


def line_of(path: Path, needle: str, last: bool = False) -> int:
    """The first (or last) 1-based line of `path` that contains `needle`."""
    hits = [n for n, t in enumerate(path.read_text().splitlines(), 1) if needle in t]
    assert hits, f"{needle!r} not in {path}"
    return hits[-1] if last else hits[0]
