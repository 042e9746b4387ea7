"""One side's run of the generated truth-table tests: the tests of each module under test in a pytest
process of their own, on one copy of the tree, within one deadline; what each case recorded, read back
from JUnit XML.

One process per module under test: in a shared interpreter, a module one table's test imports can make
another table's module import or run that would not on its own (its figure would then not be that
table's). Tables of the same module import the same thing, so they share a process, as the rows of one
table do; the cost is one interpreter start per module.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from reviewbot.execution import reaper
from reviewbot.execution.junit import UnsafeFile, open_inside
from reviewbot.execution.sandbox import Limits, run_sandboxed
from reviewbot.execution.table_sides import Side
from reviewbot.model.executed import Executed
from reviewbot.model.untrusted import secret_values, untrusted_name

__all__ = ["MAX_VALUE_CHARS", "run_table_modules"]

MAX_VALUE_CHARS = 300
_MAX_XML = 8 << 20


def _last_line(text: str) -> str:
    """The exception line of a pytest error report (`E   ModuleNotFoundError: ...`), else its last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    return errors[-1] if errors else (lines[-1] if lines else "")


def _read_results(xml: Path, run_root: Path) -> tuple[dict[tuple[str, str], Executed], dict[str, str], str]:
    """Per (test module, case name): what it recorded; per module: why it did not import; a problem."""
    try:
        fd = open_inside(xml, run_root)
    except UnsafeFile as exc:
        return {}, {}, str(exc)
    except OSError as exc:
        return {}, {}, exc.strerror or str(exc)
    with open(fd, "rb") as fh:
        data = fh.read(_MAX_XML + 1)
    if len(data) > _MAX_XML:
        return {}, {}, "the JUnit report is too large; not read"
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return {}, {}, f"the JUnit report does not parse: {exc}"
    secrets = secret_values()

    def safe(text: str) -> str:
        return untrusted_name(text, MAX_VALUE_CHARS, secrets=secrets, unique=False)

    found: dict[tuple[str, str], Executed] = {}
    broken: dict[str, str] = {}
    for case in root.iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        name = case.get("name", "")
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        problem = next((c for c in case if c.tag in ("error", "failure")), None)
        if "raised" in props:
            found[(module, name)] = Executed(
                "raised", safe(props["raised"]), safe(props.get("raised_at", ""))
            )
        elif "executed" in props:
            found[(module, name)] = Executed("value", safe(props["executed"]))
        elif problem is not None:
            line = safe(_last_line(problem.text or problem.get("message") or ""))
            if not module or module == name:  # a collection error: the module did not import
                broken[name.rsplit("/", 1)[-1].removesuffix(".py").rsplit(".", 1)[-1]] = line
            else:
                found[(module, name)] = Executed("not_run", line)
    return found, broken, ""


def _pytest_command(tests: Path, modules: Sequence[str], xml: Path) -> str:
    """pytest on some generated modules, their results in `xml`."""
    return " ".join(
        shlex.quote(a)
        for a in (
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(tests / "pytest.ini"),
            "--rootdir",
            str(tests),
            "-o",
            "junit_family=xunit1",
            # one table's test that does not import must not stop the others of its process
            "--continue-on-collection-errors",
            f"--junitxml={xml}",
            *(str(tests / f"{m}.py") for m in modules),
        )
    )


def run_table_modules(
    modules: Sequence[tuple[str, str, str]],
    roots: Sequence[str],
    tree: Path,
    run_root: Path,
    *,
    sandbox: str,
    limits: Limits,
    timeout: float,
    env: Sequence[str],
) -> Side:
    """Each (test module name, code, module under test) run on a copy of `tree`, `roots` (relative to it)
    on the import path, one process per module under test, all within `timeout` seconds. The side's problem (a process killed at the deadline, a report that
    cannot be read) holds for the modules that recorded nothing; those that ran keep their results."""
    reaper.check_open()
    run_root.mkdir(parents=True)
    tests = run_root / "tt"
    tests.mkdir()
    (tests / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    groups: dict[str, list[str]] = {}
    for name, code, under_test in modules:
        (tests / f"{name}.py").write_text(code, encoding="utf-8")
        groups.setdefault(under_test, []).append(name)
    reports = run_root / "tt-reports"
    reports.mkdir()
    workspace = run_root / "ws"
    shutil.copytree(tree, workspace, symlinks=True)
    path = ":".join(str(workspace / r) if r else str(workspace) for r in roots)
    deadline = time.monotonic() + timeout
    found: dict[tuple[str, str], Executed] = {}
    broken: dict[str, str] = {}
    problem = ""
    for n, names in enumerate(groups.values()):
        left = deadline - time.monotonic()
        if left < 1.0:
            problem = problem or f"did not finish within {timeout:g} s and was killed"
            break
        xml = reports / f"tables-{n}.xml"
        res = run_sandboxed(
            _pytest_command(tests, names, xml),
            run_root,
            workspace,
            timeout=left,
            sandbox=sandbox,
            limits=limits,
            allow_env=env,
            set_env={"PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        if res.timed_out:  # the side's time is used up: the tables after it are not run either
            problem = f"did not finish within {timeout:g} s and was killed"
            break
        got, failed, unread = _read_results(xml, run_root)
        found.update(got)
        broken.update(failed)
        if unread and not got and not failed and not problem:
            tail = [ln for ln in res.output.splitlines() if ln.strip()][-1:]
            unread = f"{unread} (exit {res.exit_code}{': ' + tail[0] if tail else ''})"
            problem = untrusted_name(unread, MAX_VALUE_CHARS, unique=False)
    return found, broken, problem
