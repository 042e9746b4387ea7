"""Execute the truth tables: a generated pytest per table, run in the sandbox on the head and on the base.

    runs = run_tables(change, repo_path, tables, head_facts, index, cfg=cfg, sandbox=kind, ...)
    runs.tables      # ExecutedTable per table: the harness (or why none), each row predicted vs executed
    runs.notes       # tables that were wrong, could not be imported, or were not run

For each table whose construction path `harness.find_harness` finds, `table_tests.generate` writes a
real pytest file (one case per row, and the all-defaults build). Each case records what it saw
(`record_property`: the target's value as Python source, or the exception's last line) into JUnit XML
in the run directory, read back like every JUnit file (no link followed, inside the run, names made
safe). The files run with the same sandbox, limits, environment and deadline as the repository's
tests, once on an export of the head and once on the base, the tables of each module under test in a
pytest process of their own (execution/tables_run.py: no table imports or runs thanks to another
module's imports).
C++ tables go to execution/cpp_harness_run.py instead (a generated `_test.cc`, compiled as the
repository compiles its tests, each row run in its own process, in the same sandbox).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.execution.call_sites import sites_of
from reviewbot.execution.config import TestConfig
from reviewbot.execution.cpp_harness_run import run_cpp_tables
from reviewbot.execution.harness import find_harness
from reviewbot.execution.sandbox import Limits
from reviewbot.execution.table_sides import Side, on_both_sides
from reviewbot.execution.table_tests import Case, cases_of, generate, predicted
from reviewbot.execution.tables_run import run_table_modules
from reviewbot.lang.facts import FileFacts
from reviewbot.lang.index import RepoIndex
from reviewbot.model.change import ChangeSet, Note, SkipReason
from reviewbot.model.executed import NOT_RUN, Executed, ExecutedRow, ExecutedTable, Harness, unbuildable
from reviewbot.model.messages import msg
from reviewbot.model.truthtable import TruthTable

__all__ = ["TableRuns", "packages_of", "run_tables"]

_UNTAKEN = "got an unexpected keyword argument"  # TypeError of a constructor given a keyword it lacks


@dataclass
class TableRuns:
    tables: list[ExecutedTable] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


@dataclass(frozen=True)
class _Plan:
    table: TruthTable
    harness: Harness
    cases: tuple[Case, ...]
    code: str
    module: str  # the test module's name in the run directory


_Side = Side


def _recorded(p: _Plan, found: Mapping[tuple[str, str], Executed]) -> bool:
    """Whether the plan's test module recorded anything (a side's problem holds for those that did not)."""
    return any(module == p.module for module, _ in found)


def _reason(p: _Plan, sides: Mapping[str, _Side]) -> str:
    """Why the table did not run on the head ("" when it did)."""
    found, broken, problem = sides.get("head", ({}, {}, "not run"))
    if problem and not _recorded(p, found):
        return f"head: {problem}"
    if p.module in broken:
        return f"head: the test did not import: {broken[p.module]}"
    return ""


def _unbuilt(h: Harness, got: Executed, defaults: Executed | None, everywhere: str) -> Executed:
    """A raise that says the harness could not build the object is no executed value of the row: a
    build that did not fit the constructor's signature; the row raising exactly as every build does
    on both revisions (`everywhere`: that line; a model download in a sandbox without network); or
    (the method and function harnesses) the function raising with the row's values as with every
    default (it needs a state no column sets)."""
    if got.outcome != "raised":
        return got
    if unbuildable(got.value):
        return Executed("not_run", f"could not be built: {got.value}")
    if defaults is None or defaults is got or defaults.value != got.value:
        return got
    if got.value == everywhere:
        return Executed("not_run", f"raises as the all-defaults build does on both revisions: {got.value}")
    if h.called:
        return Executed("not_run", f"`{h.function}` raises the same with every default: {got.value}")
    return got


def _executed_table(
    p: _Plan,
    sides: Mapping[str, _Side],
    seconds: float,
) -> ExecutedTable:
    slug = p.harness.target
    defaults = f"test_{slug}_row[defaults]"
    raised = {
        side: got.value
        for side in ("head", "base")
        if (got := sides.get(side, ({}, {}, ""))[0].get((p.module, defaults))) is not None
        and got.outcome == "raised"
    }
    # the line every build raises on both revisions ("" when the defaults build anywhere)
    everywhere = raised["head"] if len(set(raised.values())) == 1 and len(raised) == 2 else ""

    def of(side: str, name: str) -> Executed:
        found, broken, problem = sides.get(side, ({}, {}, "not run"))
        if p.module in broken:
            return Executed("not_run", f"the test did not import: {broken[p.module]}")
        if problem and not _recorded(p, found):
            return Executed("not_run", problem)
        got = found.get((p.module, name), NOT_RUN)
        if side == "base" and got.outcome == "raised" and _UNTAKEN in got.value:
            # A column the change adds to the constructor: the base cannot be built with it at all.
            return Executed("not_run", f"the base does not take this row's keywords: {got.value}")
        return _unbuilt(p.harness, got, found.get((p.module, defaults)), everywhere)

    rows = []
    for c in p.cases:
        row = p.table.rows[c.row]
        name = f"test_{slug}_row[r{c.row}]"
        rows.append(
            ExecutedRow(
                index=c.row,
                inputs=dict(row.inputs),
                changed=row.changed,
                default=row.default,
                predicted_head=c.expected,
                predicted_base=predicted(row.base, p.table, row),
                head=of("head", name),
                base=of("base", name),
            )
        )
    return ExecutedTable(
        target=p.table.target,
        function=p.table.function,
        path=p.table.path,
        line=p.table.line,
        harness=p.harness,
        reason=_reason(p, sides),
        rows=tuple(rows),
        defaults_head=of("head", f"test_{slug}_row[defaults]"),
        defaults_base=of("base", f"test_{slug}_row[defaults]"),
        test_code=p.code,
        seconds=seconds,
    )


def _notes(t: ExecutedTable) -> list[Note]:
    out: list[Note] = []
    where = f"{t.path}:{t.line}"
    for r in t.wrong_rows:
        for side, expected, executed, agrees in (
            ("head", r.predicted_head, r.head, r.agrees_head),
            ("base", r.predicted_base, r.base, r.agrees_base),
        ):
            if agrees is False:
                out.append(
                    Note.of(
                        SkipReason.UNAVAILABLE,
                        msg(
                            "note.table-wrong",
                            target=t.target,
                            where=where,
                            row=r.index,
                            side=side,
                            predicted=expected or "",
                            executed=executed.value,
                        ),
                        t.path,
                    )
                )
    d = t.defaults_head
    if d.outcome == "not_run" and d.value.startswith("the test did not import"):
        why = msg("note.table-not-run", target=t.target, where=where, reason=d.value)
        out.append(Note.of(SkipReason.UNAVAILABLE, why, t.path))
    return out


def packages_of(change: ChangeSet) -> set[str] | None:
    """The head's directories that hold an `__init__.py` (None: the head's tree is not at hand)."""
    tree = change.head_tree
    if tree is None:
        return None
    return {p.rpartition("/")[0] for p in tree.paths() if p == "__init__.py" or p.endswith("/__init__.py")}


def run_tables(
    change: ChangeSet,
    repo_path: Path,
    tables: Sequence[TruthTable],
    head_facts: Mapping[str, FileFacts],
    index: RepoIndex,
    *,
    cfg: TestConfig,
    sandbox: str,
    limits: Limits,
    timeout: float,
    scratch: Path,
) -> TableRuns:
    """Every table's harness (or why none), and the executed rows of those that have one.

    `scratch`: an empty directory for the exports and runs (the caller removes it)."""
    started = time.monotonic()
    packages = packages_of(change)
    sites = sites_of(change)
    plans: dict[int, _Plan] = {}
    by_table: dict[int, ExecutedTable] = {}
    for n, t in enumerate(tables):
        if t.lang == "cpp":
            continue  # compiled and run by execution/cpp_harness_run.py
        changed = change.file(t.path)
        text = changed.head_text if changed is not None else None
        found = find_harness(t, head_facts, text, packages, sites)
        if isinstance(found, str):
            by_table[n] = ExecutedTable(t.target, t.function, t.path, t.line, None, reason=found)
            continue
        cases = tuple(cases_of(t, found, index))
        plans[n] = _Plan(t, found, cases, generate(t, found, cases), f"test_reviewbot_table_{n}")
    out = TableRuns()
    if plans:
        sides = on_both_sides(
            change,
            repo_path,
            scratch,
            "",
            timeout,
            lambda tree, run_dir, limit: run_table_modules(
                [(p.module, p.code, p.harness.module) for p in plans.values()],
                sorted({p.harness.import_root for p in plans.values()}),
                tree,
                run_dir,
                sandbox=sandbox,
                limits=limits,
                timeout=limit,
                env=cfg.env,
            ),
        )
        seconds = round(time.monotonic() - started, 1)
        for n, p in plans.items():
            by_table[n] = _executed_table(p, sides, seconds)
        for side, (_, _, problem) in sides.items():
            if problem:
                why = msg("note.tables-not-run", side=side, reason=problem)
                out.notes.append(Note.of(SkipReason.UNAVAILABLE, why))
    cpp = {n: t for n, t in enumerate(tables) if t.lang == "cpp"}
    if cpp:
        ran = run_cpp_tables(
            change,
            repo_path,
            cpp,
            index,
            cfg=cfg,
            sandbox=sandbox,
            limits=limits,
            timeout=timeout,
            scratch=scratch,
        )
        by_table.update(ran.tables)
        out.notes.extend(ran.notes)
    out.tables = [by_table[i] for i in sorted(by_table)]
    for done in out.tables:
        out.notes.extend(_notes(done))
    return out
