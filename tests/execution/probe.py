"""A small repository whose own tests probe the sandbox or the mutants (real git, real test runs)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.change.diff import load_change
from reviewbot.checks import ineffective_test, untested_branch
from reviewbot.execution.execute import Execution
from reviewbot.execution.sandbox import SANDBOXES, detect_sandbox
from reviewbot.lang.facts import Assignment, Lang
from reviewbot.lang.predicate import Atom, Not, conj
from reviewbot.model.change import ChangeSet
from reviewbot.model.finding import Finding
from tests.gitrepo import Repo

BASE_CFG = "def derive(cfg):\n    return cfg\n"
HEAD_CFG = (
    "def derive(cfg):\n    if cfg.style == 0 and not cfg.kv:\n        cfg.flag = False\n    return cfg\n"
)


# A minimal test runner committed into the probe repositories: runs `test_*` functions of the given
# modules and writes JUnit XML like pytest does, in a fraction of pytest's start-up time.
RUNNER = """import importlib, os, sys, traceback
from xml.sax.saxutils import quoteattr

sys.path.insert(0, os.getcwd())
cases, failed = [], 0
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    for fn in sorted(n for n in dir(module) if n.startswith("test_")):
        try:
            getattr(module, fn)()
            cases.append((name, fn, ""))
        except Exception:
            failed += 1
            cases.append((name, fn, traceback.format_exc()))
os.makedirs("build", exist_ok=True)
with open("build/junit.xml", "w") as out:
    out.write('<testsuites><testsuite name="probe">')
    for cls, fn, err in cases:
        out.write(f"<testcase classname={quoteattr(cls)} name={quoteattr(fn)}>")
        if err:
            out.write(f"<failure message={quoteattr(err[-200:])}/>")
        out.write("</testcase>")
    out.write("</testsuite></testsuites>")
sys.exit(1 if failed else 0)
"""


def runner_command(*modules: str) -> str:
    """Run the probe repository's tests with the interpreter running these tests."""
    return f"{sys.executable} run_tests.py {' '.join(modules)}"


def toml(command: str, timeout: float = 30) -> str:
    # A JSON string is a valid TOML basic string.
    return f"[tests]\ncommand = {json.dumps(command)}\ntimeout = {timeout}\n"


def make_repo(path: Path, base_files: dict[str, str], head_files: dict[str, str]) -> tuple[Repo, str, str]:
    repo = Repo(path)
    base = repo.commit({"cfg.py": BASE_CFG, "run_tests.py": RUNNER, **base_files}, "base")
    repo.checkout("pr", create=True)
    head = repo.commit({"cfg.py": HEAD_CFG, **head_files}, "head")
    return repo, base, head


def change_of(repo: Repo, base: str, head: str) -> ChangeSet:
    return load_change(repo.path, base, head)


def flag_derivation() -> list[ChangedDerivation]:
    """The head's new branch in cfg.py, as the Python front end reports it."""
    guard = conj(Atom.comparison("cfg.style", "==", "0"), Not(Atom("cfg.kv")))
    a = Assignment(
        target="cfg.flag",
        field="flag",
        value="False",
        guard=guard,
        path="cfg.py",
        line=3,
        function="derive",
        lang=Lang.PYTHON,
        text="cfg.flag = False",
        guard_line=2,
        branch_start=2,
        branch_end=3,
    )
    return [ChangedDerivation(head=a, base=(), new_branch=True)]


def working_sandboxes(scratch: Path) -> list[str]:
    return [k for k in SANDBOXES if detect_sandbox(scratch, (k,)) == k]


def stage_findings(ex: Execution) -> list[Finding]:
    """What the execution-stage rules say about this execution alone (no static facts)."""
    r = ex.results()
    if r.head is None or not r.ran:
        return []
    return untested_branch.findings(r.mutants, r.head, r.command, r.sandbox) + ineffective_test.findings(
        r.new_tests, r.mutants, r.head
    )
