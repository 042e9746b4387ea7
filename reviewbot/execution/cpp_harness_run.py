"""Run the C++ truth tables: compile each generated `_test.cc` as the repository compiles its tests, run
every row in its own process on the head and on the base, in the same sandbox, limits, `[tests] env`
and deadline as the Python tables (execution/tables.py, which calls `run_cpp_tables`).

Each row prints one line (`EXECUTED False`, `RAISED std::exception: ...`); a process killed by a
signal (an `assert`, a crash) is the row's "raised" outcome. The lines are written by a shell loop
into one file of the run directory and read back like a JUnit file (no link followed, inside the run,
size-capped, names made safe).
"""

from __future__ import annotations

import shlex
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.execution import reaper
from reviewbot.execution.config import TestConfig
from reviewbot.execution.cpp_harness import CppPlan, cpp_harness
from reviewbot.execution.cpp_harness_code import CppCase, cpp_cases, cpp_predicted, cpp_test
from reviewbot.execution.cpp_harness_compile import Compile, cpp_compile
from reviewbot.execution.junit import UnsafeFile, open_inside
from reviewbot.execution.sandbox import Limits, run_sandboxed
from reviewbot.execution.table_sides import Side, on_both_sides
from reviewbot.lang.index import RepoIndex
from reviewbot.model.change import ChangeSet, Note, SkipReason
from reviewbot.model.executed import NOT_RUN, Executed, ExecutedRow, ExecutedTable
from reviewbot.model.messages import msg
from reviewbot.model.truthtable import TruthTable
from reviewbot.model.untrusted import secret_values, untrusted_name

__all__ = ["CppRuns", "run_cpp_tables"]

_MAX_VALUE = 300
_MAX_RESULTS = 1 << 20


@dataclass
class CppRuns:
    tables: dict[int, ExecutedTable] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)


@dataclass(frozen=True)
class _Plan:
    table: TruthTable
    plan: CppPlan
    cases: tuple[CppCase, ...]
    code: str
    slot: str  # `t0`: the file names in the run directory


# per plan slot: row id -> what it gave; per slot: why it did not compile; a problem of the whole run
_Side = Side


def _script(plans: list[_Plan], tt: Path) -> str:
    """The shell loop: compile each file, then run each of its rows in its own process."""
    out = shlex.quote(str(tt / "results.txt"))
    lines = ["#!/bin/sh", f": > {out}"]
    for p in plans:
        binary, log = str(tt / p.slot), shlex.quote(str(tt / f"{p.slot}.log"))
        ids = " ".join(["defaults", *(f"r{c.row}" for c in p.cases)])
        compile_ = p.plan.compile.command(str(tt / f"{p.slot}_test.cc"), binary)
        lines += [
            f"if {compile_} > {log} 2>&1; then",
            f"  for r in {ids}; do",
            f'    got=$({shlex.quote(binary)} "$r" 2>/dev/null); code=$?',
            f'    printf \'ROW {p.slot} %s %s %s\\n\' "$r" "$code" "$(printf \'%s\' "$got" | tail -n 1)" >> {out}',
            "  done",
            "else",
            f"  printf 'COMPILE {p.slot} %s\\n' \"$(grep -m 1 'error' {log} || tail -n 1 {log})\" >> {out}",
            "fi",
        ]
    return "\n".join(lines) + "\n"


def _row(code: str, text: str) -> Executed:
    if text.startswith("EXECUTED "):
        return Executed("value", text.removeprefix("EXECUTED "))
    if text.startswith("RAISED "):
        return Executed("raised", text.removeprefix("RAISED "))
    n = int(code) if code.isdigit() else -1
    if n > 128:
        return Executed("raised", f"the row's process was killed by signal {n - 128}")
    return Executed("not_run", f"the row's process printed nothing (exit {code})")


def _read(path: Path, run_root: Path) -> _Side:
    try:
        fd = open_inside(path, run_root)
    except OSError as exc:
        return {}, {}, str(exc) if isinstance(exc, UnsafeFile) else (exc.strerror or str(exc))
    with open(fd, "rb") as fh:
        data = fh.read(_MAX_RESULTS + 1)
    if len(data) > _MAX_RESULTS:
        return {}, {}, "the results file is too large; not read"
    secrets = secret_values()

    def safe(text: str) -> str:
        return untrusted_name(text, _MAX_VALUE, secrets=secrets, unique=False)

    found: dict[tuple[str, str], Executed] = {}
    broken: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "ROW":
            slot, row, code, *text = rest.split(" ", 3)
            got = _row(code, text[0] if text else "")
            found[(slot, row)] = Executed(got.outcome, safe(got.value))
        elif kind == "COMPILE":
            slot, _, why = rest.partition(" ")
            why = why.replace(f"{path.parent}/", "").strip()  # the generated file's run path
            broken[slot] = safe(why or "the compiler failed")
    return found, broken, ""


def _run(plans: list[_Plan], tree: Path, run_root: Path, *, cfg: TestConfig, run: _RunArgs) -> _Side:
    reaper.check_open()
    run_root.mkdir(parents=True)
    tt = run_root / "tt"
    tt.mkdir()
    for p in plans:
        (tt / f"{p.slot}_test.cc").write_text(p.code, encoding="utf-8")
    (tt / "run.sh").write_text(_script(plans, tt), encoding="utf-8")
    workspace = run_root / "ws"
    shutil.copytree(tree, workspace, symlinks=True)
    res = run_sandboxed(
        f"sh {shlex.quote(str(tt / 'run.sh'))}",
        run_root,
        workspace,
        timeout=run.timeout,
        sandbox=run.sandbox,
        limits=run.limits,
        allow_env=cfg.env,
    )
    if res.timed_out:
        return {}, {}, f"did not finish within {run.timeout:g} s and was killed"
    return _read(tt / "results.txt", run_root)


@dataclass(frozen=True)
class _RunArgs:
    sandbox: str
    limits: Limits
    timeout: float


def _executed(p: _Plan, sides: Mapping[str, _Side], seconds: float) -> ExecutedTable:
    def of(side: str, row: str) -> Executed:
        found, broken, problem = sides.get(side, ({}, {}, "not run"))
        if p.slot in broken:
            return Executed("not_run", f"the test did not compile: {broken[p.slot]}")
        return Executed("not_run", problem) if problem else found.get((p.slot, row), NOT_RUN)

    _, broken, problem = sides.get("head", ({}, {}, "not run"))
    reason = f"head: {problem}" if problem else ""
    if p.slot in broken:
        reason = f"head: the generated test did not compile: {broken[p.slot]}"
    t = p.table
    rows = tuple(
        ExecutedRow(
            index=c.row,
            inputs=dict(t.rows[c.row].inputs),
            changed=t.rows[c.row].changed,
            default=t.rows[c.row].default,
            predicted_head=c.shown,
            predicted_base=cpp_predicted(t.rows[c.row].base, t, t.rows[c.row]),
            head=of("head", f"r{c.row}"),
            base=of("base", f"r{c.row}"),
        )
        for c in p.cases
    )
    return ExecutedTable(
        target=t.target,
        function=t.function,
        path=t.path,
        line=t.line,
        harness=p.plan.harness,
        reason=reason,
        rows=rows,
        defaults_head=of("head", "defaults"),
        defaults_base=of("base", "defaults"),
        test_code=p.code,
        seconds=seconds,
    )


def _plans(
    change: ChangeSet, repo_path: Path, tables: Mapping[int, TruthTable], index: RepoIndex, cfg: TestConfig
) -> tuple[dict[int, _Plan], dict[int, ExecutedTable]]:
    plans: dict[int, _Plan] = {}
    refused: dict[int, ExecutedTable] = {}
    compiles: dict[str, Compile | str] = {}
    for n, t in tables.items():
        if t.path not in compiles:
            compiles[t.path] = cpp_compile(change, repo_path, cfg.command, t.path)
        changed = change.file(t.path)
        text = changed.head_text if changed is not None else None
        found = cpp_harness(t, text, index, repo_path, change.head_sha, compiles[t.path])
        if isinstance(found, str):
            refused[n] = ExecutedTable(t.target, t.function, t.path, t.line, None, reason=found)
            continue
        cases = tuple(cpp_cases(t, index))
        plans[n] = _Plan(t, found, cases, cpp_test(t, found, cases, index), f"t{n}")
    return plans, refused


def run_cpp_tables(
    change: ChangeSet,
    repo_path: Path,
    tables: Mapping[int, TruthTable],
    index: RepoIndex,
    *,
    cfg: TestConfig,
    sandbox: str,
    limits: Limits,
    timeout: float,
    scratch: Path,
) -> CppRuns:
    """The C++ tables (by their position in the round's list): each harness (or why none) and the
    executed rows of those that have one. `scratch`: an empty directory the caller removes."""
    started = time.monotonic()
    plans, refused = _plans(change, repo_path, tables, index, cfg)
    out = CppRuns(tables=refused)
    if not plans:
        return out
    sides = on_both_sides(
        change,
        repo_path,
        scratch,
        "cpp-",
        timeout,
        lambda tree, run_dir, limit: _run(
            list(plans.values()), tree, run_dir, cfg=cfg, run=_RunArgs(sandbox, limits, limit)
        ),
    )
    seconds = round(time.monotonic() - started, 1)
    for n, p in plans.items():
        out.tables[n] = _executed(p, sides, seconds)
    for side, (_, _, problem) in sides.items():
        if problem:
            why = msg("note.tables-not-run", side=side, reason=problem)
            out.notes.append(Note.of(SkipReason.UNAVAILABLE, why))
    return out
