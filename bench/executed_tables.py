"""Executed truth tables on real commits of the corpus: how many tables could be executed, how many agreed.

    python3 bench/executed_tables.py --stub-missing      # every Python commit; writes docs/executed-tables.md
    python3 bench/executed_tables.py --only megatron --out -   # some cases, the page on stdout

For each Python case of bench/corpus/*.yaml (either split: this measures the harness, not a rule; no
label is read), the change is loaded from the repository's bare mirror (MIRRORS/<owner>+<name>/repo).
Its truth tables are built from the changed files (parse only) and each gets its construction path
(`execution.harness.find_harness`) or the reason there is none. A commit with at least one path is
then reviewed for real: the pipeline with the execution stage, the repository's `[tests]` command
`python -c pass` (so only the truth tables run; no mutants), the sandbox this machine has, the Python
environment running this script (no torch: a module that imports it says so and is not executed).
Per commit: tables, tables with a construction path, executed, rows run, rows that agreed with the
prediction on the head (and the base), wrong rows, verified tests, and the reason when not executed.
`--stub-missing` adds a diagnostic pass over the commits with a path in which the imports this
environment lacks are stubbed (bench/stub_missing.py): reported apart, never as reviewbot's figure.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from accuracy import Case, load_corpus  # noqa: E402
from executed_tables_page import CommitResult, render, result_of  # noqa: E402
from partial_mirror import leaving_out_missing_blobs  # noqa: E402
from stub_missing import missing_imports_stubbed  # noqa: E402

from reviewbot.analysis.tables.truthtable import build_truth_tables  # noqa: E402
from reviewbot.change.diff import load_change  # noqa: E402
from reviewbot.config import RepoConfig, TestConfig  # noqa: E402
from reviewbot.execution import table_sides  # noqa: E402
from reviewbot.execution.call_sites import sites_of  # noqa: E402
from reviewbot.execution.execute import ExecSettings, executor  # noqa: E402
from reviewbot.execution.harness import find_harness  # noqa: E402
from reviewbot.execution.harness_module import lifted, module_of  # noqa: E402
from reviewbot.execution.sandbox import SANDBOXES, detect_sandbox, run_sandboxed  # noqa: E402
from reviewbot.execution.tables import packages_of  # noqa: E402
from reviewbot.lang.index import RepoIndex  # noqa: E402
from reviewbot.model.change import ChangeSet  # noqa: E402
from reviewbot.model.executed import ExecutedTable  # noqa: E402
from reviewbot.review.pipeline import ReviewSettings, parse_stage, review_change  # noqa: E402

DEFAULT_MIRRORS = Path("/work/.mirror")


DEFAULT_OUT = HERE.parent / "docs" / "executed-tables.md"
# cases added to the corpus for this measurement (real commits whose changed config code imports on a
# CPU-only machine), counted apart on the page
EXTRA = HERE / "corpus" / "executed-extra.yaml"
EXTRA_IDS = frozenset(str(c["id"]) for c in (yaml.safe_load(EXTRA.read_text()) or {}).get("cases", []))


def _gitdir(case: Case, mirrors: Path) -> Path | None:
    for name in case.mirror_names:
        d = mirrors / name / "repo"
        probe = subprocess.run(
            ["git", "--git-dir", str(d), "cat-file", "-e", f"{case.commit}^{{commit}}"], capture_output=True
        )
        if d.is_dir() and probe.returncode == 0:
            return d
    return None


def _static(change: ChangeSet) -> tuple[int, list[str], int, list[tuple[str, str]]]:
    """Tables of the changed files, the reasons of those without a construction path, how many have one,
    and the modules (import root, name) that hold the Python ones."""
    parsed = parse_stage(change)
    index = RepoIndex()
    for facts in parsed.head_facts.values():
        index.add(facts)
    tables = build_truth_tables(parsed.derivations, parsed.head_facts, index)
    reasons = []
    found = 0
    packages = packages_of(change)
    sites = sites_of(change)
    modules: dict[tuple[str, str], None] = {}
    for t in tables:
        changed = change.file(t.path)
        text = changed.head_text if changed is not None else None
        got = find_harness(t, parsed.head_facts, text, packages, sites)
        if isinstance(got, str):
            reasons.append(got)
        else:
            found += 1
        located = module_of(t.path, packages) if t.path.endswith(".py") and text is not None else None
        if located is not None and text is not None:
            try:
                modules[lifted(located, ast.parse(text))] = None
            except SyntaxError:
                modules[located] = None
    return len(tables), reasons, found, list(modules)


def _probe(change: ChangeSet, gitdir: Path, modules: Sequence[tuple[str, str]], timeout: float) -> list[str]:
    """Each module that holds a table, imported on the head in the sandbox (`python -c "import m"`, the
    environment running this script): "" when it imports, else `module: the exception's last line`.
    This measures which changes' code this environment can import at all, with or without a path."""
    scratch = Path(tempfile.mkdtemp(prefix="reviewbot-probe-")).resolve()
    out = []
    try:
        ws = scratch / "run" / "ws"
        ws.parent.mkdir()
        try:
            # bench/partial_mirror.py's export, within its context
            table_sides.checkout(gitdir, change.head_sha, ws)  # type: ignore[attr-defined]
        except Exception as exc:  # an export that fails is every module's reason
            return [f"{m}: could not export the head: {exc}"[:200] for _, m in modules]
        kind = detect_sandbox(scratch / "sandbox-probe", SANDBOXES)
        for root, module in modules:
            res = run_sandboxed(
                f"{sys.executable} -c 'import {module}'",
                scratch / "run",
                ws / root if root else ws,
                timeout=timeout,
                sandbox=kind,
                set_env={"PYTHONPATH": str(ws / root if root else ws), "PYTHONDONTWRITEBYTECODE": "1"},
            )
            tail = [ln for ln in res.output.splitlines() if ln.strip()][-1:]
            why = "timed out" if res.timed_out else (tail[0] if tail else f"exit {res.exit_code}")
            out.append("" if res.exit_code == 0 else f"{module}: {why}"[:200])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def _count(result: CommitResult, tables: Sequence[ExecutedTable]) -> None:
    result.tables = len(tables)
    result.with_harness = sum(1 for t in tables if t.harness is not None)
    result.reasons = [t.reason for t in tables if not t.ran]
    result.imported = sum(1 for t in tables if t.harness is not None and "did not import" not in t.reason)
    for t in tables:
        if not t.ran:
            continue
        run = [r for r in t.rows if r.head.outcome != "not_run"]
        if not run:  # built, but no row ran (could not be built, or the method raises on any state)
            first = t.rows[0].head.value if t.rows else t.defaults_head.value
            result.reasons.append(f"no row ran on the head: {first}")
            result.details.append(_detail(t))
            continue
        result.executed += 1
        result.rows += len(run)
        result.agreed += sum(1 for r in run if r.agrees_head is True and r.agrees_base is not False)
        result.wrong += sum(1 for r in run if r.wrong)
        result.unpredicted += sum(1 for r in run if r.predicted_head is None)
        result.verified += int(t.verified)
        result.defaults_raise += int(t.defaults_raise)
        result.details.append(_detail(t))


def _detail(t: ExecutedTable) -> str:
    """What one executed table did: rows by verdict, the all-defaults build on the head."""
    run = [r for r in t.rows if r.head.outcome != "not_run"]
    agreed = sum(1 for r in run if r.agrees_head is True and r.agrees_base is not False)
    unpredicted = sum(1 for r in run if r.predicted_head is None)
    raised = sum(1 for r in run if r.head.outcome == "raised")
    kind = t.harness.kind if t.harness is not None else ""
    d = t.defaults_head
    return (
        f"`{t.target}` in `{t.function}` ({t.path}:{t.line}, {kind}): {len(run)} rows run, {agreed} agreed, "
        f"{len(t.wrong_rows)} wrong, {unpredicted} without a literal prediction, {raised} raised; "
        f"all-defaults build on the head: {d.outcome} `{d.value[:120]}`"
        + (" — verified test" if t.verified else "")
        + "".join(
            f"; row {r.index} {_inputs(r.inputs)}: predicted `{r.predicted_head}`, head `{r.head.value[:80]}`"
            for r in t.wrong_rows[:3]
        )
    )


def _inputs(inputs: Mapping[str, object]) -> str:
    return "(" + ", ".join(f"{k.removeprefix('self.')}={v}" for k, v in inputs.items()) + ")"


def _executed(change: ChangeSet, gitdir: Path, timeout: float) -> tuple[list[ExecutedTable], str]:
    """The round's executed tables, or why the execution stage did not run them."""
    tests = TestConfig(command=f"{sys.executable} -c pass", timeout=timeout)
    settings = ExecSettings(
        repo_config=RepoConfig(tests=tests), max_mutants=0, time_budget_s=timeout * 3, max_workers=1
    )
    review = review_change(change, ReviewSettings(execute=executor(gitdir, settings)))
    why = review.tests["reason_if_not_run"] if review.tests is not None else ""
    if not review.executed_tables and not why:
        why = "the round built no truth table it could run (budget)"
    return list(review.executed_tables), why.split("\n")[0]


def run_case(
    case: Case, mirrors: Path, timeout: float, probe: bool = False, static_only: bool = False
) -> CommitResult:
    result = CommitResult(case.id, case.repo, case.commit[:12], extra=case.id in EXTRA_IDS)
    started = time.monotonic()
    gitdir = _gitdir(case, mirrors)
    if gitdir is None:
        result.error = f"commit not in the mirror ({' or '.join(case.mirror_names)})"
        return result
    base = case.base or f"{case.commit}^"
    change = load_change(gitdir, base, case.commit)
    try:
        result.tables, result.reasons, result.with_harness, modules = _static(change)
        with leaving_out_missing_blobs() as left_out:
            if modules and probe:
                probed = _probe(change, gitdir, modules, min(timeout, 120.0))
                result.modules = len(probed)
                result.modules_import = probed.count("")
                result.import_failures = [p for p in probed if p]
            if result.with_harness and not static_only:
                tables, why = _executed(change, gitdir, timeout)
        result.left_out = sorted({p for paths in left_out.values() for p in paths})
        if result.with_harness and not static_only:
            if tables:
                _count(result, tables)
            else:
                result.reasons = [f"the tests did not run: {why}"] * result.with_harness + [
                    r for r in result.reasons
                ]
    finally:
        change.close()
    result.seconds = round(time.monotonic() - started, 1)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--only", action="append", default=[], help="case id substring (repeatable)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per table run (each side)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="the page to write ('-': stdout)")
    parser.add_argument("--json", type=Path, help="also write the per-commit figures as JSON")
    parser.add_argument(
        "--stub-missing",
        action="store_true",
        help="diagnostic: imports this environment lacks (torch, ...) get inert stubs in the table runs",
    )
    parser.add_argument(
        "--probe-imports",
        action="store_true",
        help="also import every module that holds a table on the head (in the sandbox), path or not",
    )
    parser.add_argument(
        "--static-only",
        action="store_true",
        help="only the tables and their construction paths (no review): a run whose commits "
        "with a path are re-run by a later --json run, the page merged by --from-json",
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        action="append",
        help="the page from earlier runs' --json figures (repeatable: a later run's cases replace the same cases)",
    )
    args = parser.parse_args(argv)
    if args.from_json:
        return _rerender(args.from_json, args.out)
    cases = [c for c in load_corpus(args.corpus) if c.lang == "python"]
    if args.only:
        cases = [c for c in cases if any(o in c.id for o in args.only)]
    results = [
        _run_logged(c, args.mirrors, args.timeout, probe=args.probe_imports, static_only=args.static_only)
        for c in cases
    ]
    stubbed: list[CommitResult] = []
    if args.stub_missing:
        with missing_imports_stubbed():
            with_path = {r.case for r in results if r.with_harness}
            stubbed = [
                _run_logged(c, args.mirrors, args.timeout, "stubbed ") for c in cases if c.id in with_path
            ]
    command = "python3 bench/executed_tables.py" + "".join(f" --only {o}" for o in args.only)
    command += " --stub-missing" if args.stub_missing else ""
    command += " --probe-imports" if args.probe_imports else ""
    command += " --static-only" if args.static_only else ""
    page = render(results, stubbed, command)
    if args.out == "-":
        sys.stdout.write(page)
    else:
        Path(args.out).write_text(page, encoding="utf-8")
    if args.json:
        figures = {
            "command": command,
            "plain": [r.__dict__ for r in results],
            "stubbed": [r.__dict__ for r in stubbed],
        }
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0


def _rerender(figures: Sequence[Path], out: str) -> int:
    """The page again from earlier runs' --json figures (their commands recorded there, else the full
    run's); a later run's figures of a case replace an earlier run's."""
    plain: dict[str, CommitResult] = {}
    stubbed: dict[str, CommitResult] = {}
    commands = []
    for f in figures:
        data = json.loads(f.read_text(encoding="utf-8"))
        plain.update((r["case"], result_of(r)) for r in data["plain"])
        stubbed.update((r["case"], result_of(r)) for r in data["stubbed"])
        commands.append(data.get("command", "python3 bench/executed_tables.py --stub-missing"))
    rerun = "".join(f"`, then its cases re-run by `{c}" for c in commands[1:])
    page = render(
        list(plain.values()),
        list(stubbed.values()),
        f"{commands[0]}{rerun}`, the page rendered from those runs' figures by `--from-json",
    )
    if out == "-":
        sys.stdout.write(page)
    else:
        Path(out).write_text(page, encoding="utf-8")
    return 0


def _run_logged(
    case: Case, mirrors: Path, timeout: float, label: str = "", probe: bool = False, static_only: bool = False
) -> CommitResult:
    try:
        r = run_case(case, mirrors, timeout, probe, static_only)
    except Exception as exc:  # one commit's failure is its row, not the bench's end
        r = CommitResult(case.id, case.repo, case.commit[:12], error=f"{type(exc).__name__}: {exc}"[:300])
    print(
        f"{label}{r.case}: tables {r.tables}, path {r.with_harness}, executed {r.executed}, rows {r.rows}, "
        f"agreed {r.agreed}, wrong {r.wrong}, modules import {r.modules_import}/{r.modules} ({r.seconds} s){' — ' + r.why() if r.executed < r.tables else ''}",
        file=sys.stderr,
        flush=True,
    )
    return r


if __name__ == "__main__":
    sys.exit(main())
