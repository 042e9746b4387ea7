"""The annotated-fixture runner (semgrep style) shared by every check's tests.

A case is a directory with `base/` and `head/` trees (see tests/fixtures/checks/README.md). The case is
committed into a real git repository (base on `main`, head on `pr`) and reviewed by the real pipeline.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from reviewbot.change.diff import load_change
from reviewbot.checks.registry import OPT_IN
from reviewbot.model.finding import Finding
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.gitrepo import Repo

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "checks"

_ANNOTATION = re.compile(r"^\s*(?://|#)\s*(todoruleid|todook|ruleid|ok):\s*([\w-]+(?:\s*,\s*[\w-]+)*)\s*$")
_EXPECT = re.compile(r"^(todoruleid|todook|ruleid|ok):\s*([\w-]+)\s+(\S+):(\d+)\s*$")


@dataclass(frozen=True)
class Expectation:
    kind: str  # ruleid | ok | todoruleid | todook
    rule: str
    path: str
    line: int


def cases() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/*") if (p / "head").is_dir())


def expectations(case: Path) -> list[Expectation]:
    out: list[Expectation] = []
    head = case / "head"
    for file in sorted(p for p in head.rglob("*") if p.is_file()):
        rel = file.relative_to(head).as_posix()
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, text in enumerate(lines):
            m = _ANNOTATION.match(text)
            if not m:
                continue
            target = i + 1
            while target < len(lines) and _ANNOTATION.match(lines[target]):
                target += 1
            for rule in re.split(r"\s*,\s*", m.group(2)):
                out.append(Expectation(m.group(1), rule, rel, target + 1))
    expect = case / "expect.txt"
    if expect.is_file():
        for raw in expect.read_text(encoding="utf-8").splitlines():
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            m = _EXPECT.match(raw.strip())
            if not m:
                raise ValueError(f"{expect}: cannot read {raw!r}")
            out.append(Expectation(m.group(1), m.group(2), m.group(3), int(m.group(4))))
    return out


def build_case(case: Path, dest: Path) -> tuple[Repo, str, str]:
    repo = Repo(dest)
    shutil.copytree(case / "base", dest, dirs_exist_ok=True)
    base = repo.commit({}, "base")
    repo.checkout("pr", create=True)
    head_dir = case / "head"
    for file in head_dir.rglob("*"):
        if not file.is_file():
            continue
        rel = file.relative_to(head_dir).as_posix()
        if rel.endswith(".deleted"):
            (dest / rel[: -len(".deleted")]).unlink()
        else:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, dest / rel)
    head = repo.commit({}, "head")
    return repo, base, head


def review_case(case: Path, dest: Path, settings: ReviewSettings | None = None) -> list[Finding]:
    """The findings of every rule, the opt-in ones too (a fixture tests the rule it names); pass
    `settings` to review as a repository configures it."""
    repo, base, head = build_case(case, dest)
    change = load_change(repo.path, base, head)
    return review_change(change, settings or ReviewSettings(enabled_rules=OPT_IN)).findings


def compare(case: Path, findings: list[Finding], known_rules: set[str]) -> list[str]:
    """Problems, as sentences; empty when the reported lines match the annotations exactly."""
    exps = expectations(case)
    problems: list[str] = []
    for e in exps:
        if e.rule not in known_rules:
            problems.append(f"{e.path}:{e.line}: annotation names unknown rule {e.rule!r}")
    rules = {e.rule for e in exps if e.rule in known_rules}
    reported = {(f.rule, f.path, f.line) for f in findings if f.rule in rules}
    for e in exps:
        if e.rule not in rules:
            continue
        hit = (e.rule, e.path, e.line) in reported
        if e.kind == "ruleid" and not hit:
            problems.append(f"{e.path}:{e.line}: expected {e.rule}, not reported")
        if e.kind == "ok" and hit:
            problems.append(f"{e.path}:{e.line}: {e.rule} reported, annotated ok")
    annotated = {(e.rule, e.path, e.line) for e in exps}
    for rule, path, line in sorted(reported - annotated):
        problems.append(f"{path}:{line}: unexpected {rule} (not annotated)")
    return problems
