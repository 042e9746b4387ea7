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
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from accuracy import Case, load_corpus  # noqa: E402
from partial_mirror import leaving_out_missing_blobs  # noqa: E402
from stub_missing import importable, missing_imports_stubbed  # noqa: E402

from reviewbot.analysis.tables.truthtable import build_truth_tables  # noqa: E402
from reviewbot.change.diff import load_change  # noqa: E402
from reviewbot.config import RepoConfig, TestConfig  # noqa: E402
from reviewbot.execution.call_sites import sites_of  # noqa: E402
from reviewbot.execution.execute import ExecSettings, executor  # noqa: E402
from reviewbot.execution.harness import find_harness  # noqa: E402
from reviewbot.execution.tables import packages_of  # noqa: E402
from reviewbot.lang.index import RepoIndex  # noqa: E402
from reviewbot.model.change import ChangeSet  # noqa: E402
from reviewbot.model.executed import ExecutedTable  # noqa: E402
from reviewbot.review.pipeline import ReviewSettings, parse_stage, review_change  # noqa: E402

DEFAULT_MIRRORS = Path("/work/.mirror")


DEFAULT_OUT = HERE.parent / "docs" / "executed-tables.md"


@dataclass
class CommitResult:
    case: str
    repo: str
    commit: str
    tables: int = 0  # truth tables of the change (changed files only)
    with_harness: int = 0
    imported: int = 0  # tables with a path whose module imported here (on the head)
    executed: int = 0
    rows: int = 0  # rows run on the head
    agreed: int = 0
    unpredicted: int = 0  # rows run whose predicted outcome is no literal: recorded, not compared
    wrong: int = 0
    verified: int = 0
    defaults_raise: int = 0
    reasons: list[str] = field(default_factory=list)  # why tables were not executed (distinct)
    details: list[str] = field(default_factory=list)  # one line per executed table
    seconds: float = 0.0
    error: str = ""
    left_out: list[str] = field(default_factory=list)  # files the mirror lacks, left out of the exports

    def why(self) -> str:
        if self.error:
            return self.error
        if not self.tables:
            return "no truth table (no changed derivation with rows)"
        counted = Counter(self.reasons)
        return "; ".join(f"{r} (×{n})" if n > 1 else r for r, n in counted.items())


def _gitdir(case: Case, mirrors: Path) -> Path | None:
    for name in case.mirror_names:
        d = mirrors / name / "repo"
        probe = subprocess.run(
            ["git", "--git-dir", str(d), "cat-file", "-e", f"{case.commit}^{{commit}}"], capture_output=True
        )
        if d.is_dir() and probe.returncode == 0:
            return d
    return None


def _static(change: ChangeSet) -> tuple[int, list[str], int]:
    """Tables of the changed files, the reasons of those without a construction path, how many have one."""
    parsed = parse_stage(change)
    index = RepoIndex()
    for facts in parsed.head_facts.values():
        index.add(facts)
    tables = build_truth_tables(parsed.derivations, parsed.head_facts, index)
    reasons = []
    found = 0
    packages = packages_of(change)
    sites = sites_of(change)
    for t in tables:
        changed = change.file(t.path)
        text = changed.head_text if changed is not None else None
        got = find_harness(t, parsed.head_facts, text, packages, sites)
        if isinstance(got, str):
            reasons.append(got)
        else:
            found += 1
    return len(tables), reasons, found


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


def run_case(case: Case, mirrors: Path, timeout: float) -> CommitResult:
    result = CommitResult(case.id, case.repo, case.commit[:12])
    started = time.monotonic()
    gitdir = _gitdir(case, mirrors)
    if gitdir is None:
        result.error = f"commit not in the mirror ({' or '.join(case.mirror_names)})"
        return result
    base = case.base or f"{case.commit}^"
    change = load_change(gitdir, base, case.commit)
    try:
        result.tables, result.reasons, result.with_harness = _static(change)
        if result.with_harness:
            with leaving_out_missing_blobs() as left_out:
                tables, why = _executed(change, gitdir, timeout)
            result.left_out = sorted({p for paths in left_out.values() for p in paths})
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


def _revision() -> str:
    out = subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


_COUNTS = (
    "tables",
    "with_harness",
    "imported",
    "executed",
    "rows",
    "agreed",
    "unpredicted",
    "wrong",
    "verified",
    "defaults_raise",
)


def _totals(results: Sequence[CommitResult]) -> list[str]:
    total = CommitResult("all", "", "")
    for r in results:
        for name in _COUNTS:
            setattr(total, name, getattr(total, name) + getattr(r, name))
    return [
        f"- commits: {len(results)}; with a truth table: {sum(1 for r in results if r.tables)}; "
        f"with a construction path: {sum(1 for r in results if r.with_harness)}; "
        f"whose changed modules (of a table with a path) import here: {sum(1 for r in results if r.imported)}; "
        f"with a table executed: {sum(1 for r in results if r.executed)}",
        f"- tables: {total.tables}; with a construction path: {total.with_harness}; whose module imports "
        f"here: {total.imported}; executed: {total.executed}",
        f"- rows run: {total.rows}; agreed: {total.agreed}; wrong: {total.wrong}; without a literal "
        f"prediction (value recorded, not compared): {total.unpredicted}; verified tests: "
        f"{total.verified}; all-defaults builds that raise: {total.defaults_raise}",
        "- executed, per commit (tables executed, rows run, agreed, wrong): "
        + (
            "; ".join(
                f"{r.case} ({r.executed}, {r.rows}, {r.agreed}, {r.wrong})" for r in results if r.executed
            )
            or "none"
        ),
    ]


def _per_commit(results: Sequence[CommitResult]) -> list[str]:
    lines = [
        "| case | commit | tables | path | imports | executed | rows | agreed | wrong | verified | not executed because |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        why = _cell(r.why()) if r.executed < r.tables or r.error else ""
        lines.append(
            f"| {r.case} | {r.commit} | {r.tables} | {r.with_harness} | {r.imported} | {r.executed} | {r.rows} "
            f"| {r.agreed} "
            f"| {r.wrong} | {r.verified} | {why} |"
        )
    ran = [(r, d) for r in results for d in r.details]
    if ran:
        lines += ["", "What each executed table did:", ""]
        lines += [f"- {r.case}: {_cell(d)}" for r, d in ran]
    return lines


def render(results: Sequence[CommitResult], stubbed: Sequence[CommitResult], command: str) -> str:
    lines = [
        "# Executed truth tables on real commits",
        "",
        f"Generated by `{command}` at reviewbot {_revision()} on "
        f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; do not edit by hand.",
        "",
        "Every Python commit of the accuracy corpus (`bench/corpus/*.yaml`, both splits: this measures the",
        "harness, not a rule; no label is read). Each change's truth tables get a construction path",
        "(a class built with the columns as keywords, its constructor running the derivation or a method",
        "it calls on `self`; or an argparse `validate_args(args)` with the columns as options) or the reason",
        "there is none; a commit with a path is reviewed with the execution stage (the sandbox, `python -c",
        "pass` as the test command so only the tables run) in this environment: a module that imports",
        "what it lacks is not executed, and says so. A derivation in a method no constructor calls is run",
        "by building the object the same way and calling the method (no arguments beyond the columns).",
        "A derivation in a module-level function, a staticmethod or a classmethod is run by calling it",
        "with the row's values (execution/harness_function.py): each column a parameter, or an attribute",
        "of a `types.SimpleNamespace` passed for one that holds the module's defaults of every other",
        "attribute the function reads; the target read from the return value, the object returned, the",
        "namespace, or the function's local as it returns.",
        "",
        "A column that compares what the harness can set with literals (`None != blend_per_split`,",
        "`1 == args.tensor_model_parallel_size`, `x in ('a', 'b')`) sets that keyword, parameter, attribute",
        "or option to a value that makes the row: its default when that does, else a literal the table",
        "names; a row no such value gives is skipped, never counted (execution/harness_conditions.py). A",
        "required argument that no column and no literal call in the repository gives is filled with a",
        "placeholder of its annotated type (`0`, `''`, `None`, ...) only when the code the test runs never",
        "reads it; the generated test names it (`GIVEN`, 'placeholders'). When that code reads it, or",
        "hands `self` to other code, there is no harness and the reason says which",
        "(execution/harness_placeholder.py).",
        "",
        f"Imports this environment has: {importable()}. Installed on this machine for the measurement",
        "only (no dependency of reviewbot): the CPU build of torch (`pip install torch==2.13.0`) and what",
        "the harness modules import without a GPU (tqdm, psutil, safetensors, pyzmq, huggingface_hub,",
        "transformers, aiohttp, pybase64, pillow, fastapi, openai, partial_json_parser, dill,",
        "sentencepiece, and for vllm's, deepspeed's, megatron's and torchtitan's own imports: setuptools<81",
        "for pkg_resources, cachetools, msgspec, blake3, py-cpuinfo, prometheus_client, diskcache,",
        "cloudpickle, einops, regex, pyyaml, requests, pydantic, gguf, scipy, cbor2, setproctitle,",
        "python-json-logger, watchfiles, tiktoken, protobuf, openai-harmony, hjson, spmd-types, tyro). GPU",
        "packages (apex, sgl_kernel, triton, transformer_engine) are not installed: a module that needs one",
        "is not executed.",
        "",
        "Columns: tables of the change; with a construction path; imports: of those, the tables whose",
        "module imported here (the head's generated test was collected); executed (on the head, at least one",
        "row run); rows run on the head; rows that agreed with the predicted table (head, and base where",
        "it ran); rows the table got wrong; verified tests (pass on the head, fail on the base). A row",
        "that could not be built (a `TypeError` for a missing argument; a called method raising with the",
        "row's values as with every default; a row no value of a compared keyword gives) is not run, and",
        "never counted wrong. Tables of commits",
        "without a path are counted from the changed files alone (the full round is run only for",
        "commits with a path).",
        "",
        "## Totals",
        "",
        *_totals(results),
        "",
        "## Why tables were not executed",
        "",
    ]
    why = Counter(_family(reason) for r in results for reason in r.reasons)
    lines += [f"- {n} × {family}" for family, n in why.most_common()]
    lacking = [r for r in results if r.left_out]
    if lacking:
        lines += ["", "## Files the mirrors lack", ""]
        lines += [
            "The mirrors were copied without some large blobs; a pull request's clone has them. An export",
            "that failed only for that is made again without those files (bench/partial_mirror.py):",
            "",
        ]
        lines += [f"- {r.case}: {', '.join(f'`{p}`' for p in r.left_out[:6])}" for r in lacking]
    lines += ["", "## Per commit", "", *_per_commit(results)]
    if stubbed:
        lines += [
            "",
            "## Diagnostic: the same commits with missing imports stubbed",
            "",
            "Not reviewbot's behaviour, a measure of the harness and of the symbolic tables on real code:",
            "the commits with a construction path again, each generated test starting with an import",
            "finder that answers what this environment lacks (torch, triton, ...) with inert stubs. The",
            "derivation's own code runs; whatever it takes from a stubbed package is a stub, so a row that",
            "raises or disagrees here may be the stub's doing, not the table's.",
            "",
            *_totals(stubbed),
            "",
            *_per_commit(stubbed),
        ]
    return "\n".join(lines) + "\n"


def _family(reason: str) -> str:
    """A reason without its names, to count alike reasons together."""
    if "unable to read sha1 file" in reason:
        return "the tests did not run: the mirror lacks some of the tree's objects (the export failed)"
    if "did not import" in reason:
        return "the module does not import here: " + reason.split("did not import: ", 1)[-1]
    if reason.startswith("no row ran on the head: "):
        words = reason.split(": ", 2)[1].split("`")
        return "no row ran on the head: " + "`…`".join(words[::2])
    words = reason.split("`")
    return "`…`".join(words[::2]) if len(words) > 1 else reason


def _cell(text: str) -> str:
    text = re.sub(r"/tmp/reviewbot-[\w.-]+", "/tmp/…", text)  # run directories differ every run
    return text.replace("|", "\\|").replace("\n", " ")[:400]


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
    results = [_run_logged(c, args.mirrors, args.timeout) for c in cases]
    stubbed: list[CommitResult] = []
    if args.stub_missing:
        with missing_imports_stubbed():
            with_path = {r.case for r in results if r.with_harness}
            stubbed = [
                _run_logged(c, args.mirrors, args.timeout, "stubbed ") for c in cases if c.id in with_path
            ]
    command = "python3 bench/executed_tables.py" + "".join(f" --only {o}" for o in args.only)
    command += " --stub-missing" if args.stub_missing else ""
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


def _result(figures: dict[str, Any]) -> CommitResult:
    """A commit's figures from a --json run; a run older than the `imported` and `unpredicted` counts
    gets them from its reasons (each table with a path whose module did not import says so) and its
    executed tables' detail lines."""
    r = CommitResult(**figures)
    if "imported" not in figures:
        failed = sum(1 for reason in r.reasons if "did not import" in reason)
        r.imported = max(r.with_harness - failed, 0) if r.with_harness else 0
    if "unpredicted" not in figures:  # each executed table's detail line says it
        r.unpredicted = sum(
            int(n) for d in r.details for n in re.findall(r"(\d+) without a literal prediction", d)
        )
    return r


def _rerender(figures: Sequence[Path], out: str) -> int:
    """The page again from earlier runs' --json figures (their commands recorded there, else the full
    run's); a later run's figures of a case replace an earlier run's."""
    plain: dict[str, CommitResult] = {}
    stubbed: dict[str, CommitResult] = {}
    commands = []
    for f in figures:
        data = json.loads(f.read_text(encoding="utf-8"))
        plain.update((r["case"], _result(r)) for r in data["plain"])
        stubbed.update((r["case"], _result(r)) for r in data["stubbed"])
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


def _run_logged(case: Case, mirrors: Path, timeout: float, label: str = "") -> CommitResult:
    try:
        r = run_case(case, mirrors, timeout)
    except Exception as exc:  # one commit's failure is its row, not the bench's end
        r = CommitResult(case.id, case.repo, case.commit[:12], error=f"{type(exc).__name__}: {exc}"[:300])
    print(
        f"{label}{r.case}: tables {r.tables}, path {r.with_harness}, executed {r.executed}, rows {r.rows}, "
        f"agreed {r.agreed}, wrong {r.wrong} ({r.seconds} s){' — ' + r.why() if r.executed < r.tables else ''}",
        file=sys.stderr,
        flush=True,
    )
    return r


if __name__ == "__main__":
    sys.exit(main())
