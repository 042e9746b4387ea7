"""The page of `bench/executed_tables.py`: a commit's figures, the totals, the reasons, the per-commit table.

Split from the bench so each stays readable: the bench runs the commits (the corpus, the mirrors, the
review with the execution stage) and this module turns their figures into docs/executed-tables.md.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from stub_missing import importable

HERE = Path(__file__).resolve().parent

__all__ = ["CommitResult", "render", "result_of"]


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
    modules: int = 0  # modules holding a Python table, probed on the head (--probe-imports)
    modules_import: int = 0  # of those, the ones that imported here
    import_failures: list[str] = field(default_factory=list)  # `module: last line` of those that did not
    extra: bool = False  # a case of bench/corpus/executed-extra.yaml (added for this measurement)

    def why(self) -> str:
        if self.error:
            return self.error
        if not self.tables:
            return "no truth table (no changed derivation with rows)"
        counted = Counter(self.reasons)
        return "; ".join(f"{r} (×{n})" if n > 1 else r for r, n in counted.items())


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
        *_probed(results),
        *_extra(results),
        "- executed, per commit (tables executed, rows run, agreed, wrong): "
        + (
            "; ".join(
                f"{r.case} ({r.executed}, {r.rows}, {r.agreed}, {r.wrong})" for r in results if r.executed
            )
            or "none"
        ),
    ]


def _extra(results: Sequence[CommitResult]) -> list[str]:
    """The commits with a table executed, of the corpus proper and of executed-extra.yaml apart."""
    extra = [r for r in results if r.extra]
    if not extra:
        return []
    own = [r for r in results if not r.extra]
    return [
        f"- of the corpus proper: {len(own)} commits, with a table executed: "
        f"{sum(1 for r in own if r.executed)} (tables {sum(r.executed for r in own)}, rows run "
        f"{sum(r.rows for r in own)}, agreed {sum(r.agreed for r in own)}, wrong {sum(r.wrong for r in own)}); "
        f"of bench/corpus/executed-extra.yaml: {len(extra)} commits, with a construction path: "
        f"{sum(1 for r in extra if r.with_harness)}, with a table executed: "
        f"{sum(1 for r in extra if r.executed)} (tables {sum(r.executed for r in extra)}, rows run "
        f"{sum(r.rows for r in extra)}, agreed {sum(r.agreed for r in extra)}, wrong "
        f"{sum(r.wrong for r in extra)})"
    ]


def _probed(results: Sequence[CommitResult]) -> list[str]:
    """The commits whose changed modules import here (probed, path or not): their tables and rows."""
    probed = [r for r in results if r.modules]
    if not probed:
        return []
    ok = [r for r in probed if r.modules_import]
    return [
        f"- commits whose changed modules were probed (every module holding a Python table, imported on "
        f"the head in the sandbox): {len(probed)}; with at least one module that imports here: {len(ok)} "
        f"({', '.join(r.case for r in ok)}); their tables: {sum(r.tables for r in ok)}, with a "
        f"construction path: {sum(r.with_harness for r in ok)}, executed: {sum(r.executed for r in ok)} "
        f"(in {sum(1 for r in ok if r.executed)} commits); rows run: {sum(r.rows for r in ok)}, agreed: "
        f"{sum(r.agreed for r in ok)}, wrong: {sum(r.wrong for r in ok)}"
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
        "harness, not a rule; no label is read), including `bench/corpus/executed-extra.yaml`: real",
        "Megatron-LM commits that change a derivation in `validate_args`, added (labelled blind, split",
        "train) because too few of the corpus's commits change config code that imports without GPU",
        "packages; they are counted apart below. Each change's truth tables get a construction path",
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
        "constructor's required arguments come from the repository's own calls (test files first): the",
        "first call that gives them all as literals (a literal, a positional literal at its parameter's",
        "place, or a name its file binds once at top level to a literal: `sequence_length=_SEQUENCE_LENGTH`);",
        "else a call that gives some, with the rest filled with a placeholder of its annotated type (`0`,",
        "`''`, `None`, ...) only when the code the test runs never reads it; else placeholders alone",
        "(execution/harness_given.py). The generated test names where each value comes from (`GIVEN`,",
        "'placeholders'). When that code reads an argument no call gives, or hands `self` to other code,",
        "there is no harness and the reason says which (execution/harness_placeholder.py). An argparse",
        "validation takes the options a repository test sets before it validates, preferring a test that",
        "fits one process (no parallel or world size above 1: the generated test runs in one process),",
        "then a test file's over a tool's, then the one that sets the fewest options from a test's",
        "parameters (those stay at the parser's default, which the validation may reject).",
        "",
        "The tables of each module under test run in a pytest process of their own (on each side):",
        "no table imports or runs because another table's test imported something first (before,",
        "all of a commit's tables shared one process, and megatron-e7df52309's ModelParallelConfig",
        "table ran only because an earlier test had imported what its module lacks here).",
        "",
        f"Imports this environment has: {importable()}. Installed on this machine for the measurement",
        "only (no dependency of reviewbot): the CPU build of torch (`pip install torch==2.13.0`) and what",
        "the harness modules import without a GPU (tqdm, psutil, safetensors, pyzmq, huggingface_hub,",
        "transformers, aiohttp, pybase64, pillow, fastapi, openai, partial_json_parser, dill,",
        "sentencepiece, and for vllm's, deepspeed's, megatron's and torchtitan's own imports: setuptools<81",
        "for pkg_resources, cachetools, msgspec, blake3, py-cpuinfo, prometheus_client, diskcache,",
        "cloudpickle, einops, regex, pyyaml, requests, pydantic, gguf, scipy, cbor2, setproctitle,",
        "python-json-logger, watchfiles, tiktoken, protobuf, openai-harmony, hjson, spmd-types, tyro;",
        "and uvloop, datasets, tensorboardX, torchdata, which only modules of tables without a path",
        "import). GPU",
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
    # counted by their text with run directories blanked (each probe exports to its own)
    failures = Counter(_cell(f.split(": ", 1)[-1]) for r in results for f in r.import_failures)
    if failures:
        lines += ["", "## Why probed modules do not import here", ""]
        lines += [f"- {n} × {why}" for why, n in failures.most_common()]
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


def result_of(figures: dict[str, Any]) -> CommitResult:
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
