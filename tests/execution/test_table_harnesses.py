"""Executed truth tables on eval-style mini repositories (issue 25's "Must show"), through real rounds.

Two construction paths: a dataclass whose `__post_init__` derives the field, and a Megatron-style
argparse launcher (`parse_args()` parses the command line, `validate_args(args)` mutates the
namespace; the table's inputs are options). For each: the executed table matches the predicted one
row for row on the head and the base; missing-tests offers the generated test as a verified sketch
(it ran in the sandbox, passes on the head, fails on the base); and that sketch, committed into the
repository as it is, makes missing-tests go away in the next round of the same pull request (its
mutant is killed by the pasted test). The rounds run through `reviewbot run --pr` (the CLI, the
local rounds store, the base's `.reviewbot.toml` with a pytest `[tests]` command). Then the argparse
path's all-defaults P0 and a row its table gets wrong (reviewed in-process, as test_executed_tables).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewbot import cli
from tests.execution.probe import toml
from tests.execution.test_executed_tables import _only_table, _review
from tests.gitrepo import Repo

PR = 7
# The mini repositories' own test command: pytest with a JUnit report (the mutants' verdicts).
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider --junitxml=build/junit.xml tests"
SMOKE = "def test_the_package_imports():\n    import pkg  # noqa: F401\n"

DATACLASS_BASE = """from dataclasses import dataclass
from enum import Enum


class Mode(Enum):
    FAST = 1
    SLOW = 2
    OFF = 3


@dataclass
class Config:
    mode: Mode = Mode.FAST
    cache: bool = False
    use_rope: bool = True

    def __post_init__(self):
        if self.mode == Mode.SLOW:
            self.use_rope = False
"""
DATACLASS_HEAD = DATACLASS_BASE.replace(
    "if self.mode == Mode.SLOW:", "if self.mode == Mode.SLOW or not self.cache:"
)

# Megatron's shape: helpers add option groups, `parse_args` parses sys.argv, `validate_args` derives.
ARGS_BASE = '''"""Command-line arguments of the trainer."""

import argparse
import os


def parse_args(extra_args_provider=None, ignore_unknown_args=False):
    parser = argparse.ArgumentParser(description="Trainer arguments", allow_abbrev=False)
    parser = _add_network_size_args(parser)
    parser = _add_distributed_args(parser)
    if extra_args_provider is not None:
        parser = extra_args_provider(parser)
    if ignore_unknown_args:
        args, _ = parser.parse_known_args()
    else:
        args = parser.parse_args()
    args.rank = int(os.getenv("RANK", "0"))
    args.world_size = int(os.getenv("WORLD_SIZE", "1"))
    return args


def validate_args(args, defaults={}):
    if args.rank == 0:
        print(f"using world size: {args.world_size}")
    return args


def _add_network_size_args(parser):
    group = parser.add_argument_group(title="network size")
    group.add_argument("--num-layers", type=int, default=None, help="Number of transformer layers.")
    return parser


def _add_distributed_args(parser):
    group = parser.add_argument_group(title="distributed")
    group.add_argument("--sequence-parallel", action="store_true", help="Enable sequence parallelism.")
    group.add_argument(
        "--no-async-tensor-model-parallel-allreduce",
        action="store_false",
        dest="async_tensor_model_parallel_allreduce",
        help="Disable the asynchronous all-reduce of the tensor-parallel input gradients.",
    )
    return parser
'''
ARGS_HEAD = ARGS_BASE.replace(
    '        print(f"using world size: {args.world_size}")\n',
    '        print(f"using world size: {args.world_size}")\n'
    "    if args.sequence_parallel:\n"
    "        args.async_tensor_model_parallel_allreduce = False\n",
)


def _repo(tmp_path: Path, path: str, base_text: str, head_text: str) -> tuple[Repo, str, str]:
    repo = Repo(tmp_path / "repo")
    files: dict[str, str | bytes | None] = {
        ".reviewbot.toml": toml(PYTEST, timeout=120),
        "pkg/__init__.py": "",
        "tests/test_smoke.py": SMOKE,
        path: base_text,
    }
    base = repo.commit(files, "base")
    repo.checkout("pr", create=True)
    head = repo.commit({path: head_text}, "head")
    return repo, base, head


def _round(
    repo: Repo, base: str, head: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """One round of PR 7 through the CLI, recorded in a SQLite store; its JSON report."""
    for name in [n for n in os.environ if n.startswith("REVIEWBOT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / f"round-{head[:8]}.json"
    db = f"sqlite:///{tmp_path / 'rounds.sqlite3'}"
    argv = ["run", "--path", str(repo.path), "--base", base, "--head", head, "--pr", str(PR), "--db", db]
    assert cli.main([*argv, "--format", "json", "-o", str(out)]) == 0
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _matches_row_for_row(table: dict[str, Any]) -> None:
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    assert table["rows"] and table["wrong_rows"] == []
    for row in table["rows"]:  # every row ran on both revisions and gave exactly what the table predicted
        for side in ("base", "head"):
            assert row["predicted"][side] is not None, row
            assert row["executed"][side] == {"outcome": "value", "value": row["predicted"][side]}, row
    assert table["agreed"] == len(table["rows"])


def _missing_tests(doc: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["rule"] == "missing-tests" and f["path"] == path]


def _verified_sketch(doc: dict[str, Any], path: str) -> str:
    (finding,) = _missing_tests(doc, path)
    (table,) = [t for t in doc["executed_tables"] if t["path"] == path]
    assert table["verified"] is True and table["fails_on_base"]
    assert finding["extra"]["verified"] == "passes on head, fails on base"
    assert "The test below is verified: reviewbot ran it in the" in finding["suggestion"]
    assert "it passes on the head and fails on the base" in finding["suggestion"]
    # The sketch is the very test that ran (not the unverified `make_config(...)` sketch).
    assert finding["suggestion_code"] == table["test"]
    assert "make_config" not in finding["suggestion_code"]
    return str(finding["suggestion_code"])


def _paste_and_review_again(
    repo: Repo,
    base: str,
    path: str,
    sketch: str,
    first: dict[str, Any],
    tmp_path: Path,
    mp: pytest.MonkeyPatch,
) -> dict[str, Any]:
    """Commit the sketch unchanged as a test file of the pull request and run its next round."""
    head2 = repo.commit({"tests/test_truth_table.py": sketch}, "add the suggested test")
    second = _round(repo, base, head2, tmp_path, mp)
    assert second["round"] == first["round"] + 1
    assert _missing_tests(second, path) == []
    # Its rows are one parametrized test that kills the mutant: no row is an "ineffective" test of its own.
    assert [f for f in second["findings"] if f["path"] == "tests/test_truth_table.py"] == []
    (gone,) = _missing_tests(first, path)
    assert gone["fingerprint"] in {f["fingerprint"] for f in second["fixed"]}
    # It went because the pasted test kills the branch's mutant (executed, not a mention): the same
    # mutant survived the repository's other tests in the first round.
    assert first["tests"]["survived"] == first["tests"]["mutants"] >= 1
    assert second["tests"]["killed"] == second["tests"]["mutants"] == first["tests"]["mutants"]
    assert second["tests"]["failed"] == 0 and second["tests"]["ran"] > first["tests"]["ran"]
    return second


def test_dataclass_post_init_table_runs_as_predicted_and_its_verified_sketch_closes_the_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = "pkg/config.py"
    repo, base, head = _repo(tmp_path, path, DATACLASS_BASE, DATACLASS_HEAD)
    first = _round(repo, base, head, tmp_path, monkeypatch)
    (table,) = first["executed_tables"]
    assert table["harness"]["kind"] == "dataclass" and table["harness"]["function"] == "__post_init__"
    _matches_row_for_row(table)
    assert len(table["rows"]) == 8
    (survived,) = _missing_tests(first, path)
    assert "the mutant survives" in survived["evidence"][0]  # the repository's own tests ran
    sketch = _verified_sketch(first, path)
    _paste_and_review_again(repo, base, path, sketch, first, tmp_path, monkeypatch)


def test_argparse_validate_args_table_runs_as_predicted_and_its_verified_sketch_closes_the_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = "pkg/arguments.py"
    repo, base, head = _repo(tmp_path, path, ARGS_BASE, ARGS_HEAD)
    first = _round(repo, base, head, tmp_path, monkeypatch)
    (table,) = first["executed_tables"]
    assert table["harness"] == {
        "path": path,
        "module": "pkg.arguments",
        "import_root": "",
        "owner": "validate_args",
        "kind": "argparse",
        "function": "validate_args",
        "target": "async_tensor_model_parallel_allreduce",
        "keywords": {
            "args.sequence_parallel": "sequence_parallel",
            "args.async_tensor_model_parallel_allreduce": "async_tensor_model_parallel_allreduce",
        },
        "enums": [],
        "defaults_from": "parse_args",
        "defaults_call": "args",
        "via": "",
        "given": {},
        "given_from": "",
        "call": False,
        "sets": [],
        "args": [],
    }
    _matches_row_for_row(table)
    assert len(table["rows"]) == 4
    changed = {
        (r["inputs"]["args.sequence_parallel"], r["inputs"]["args.async_tensor_model_parallel_allreduce"])
        for r in table["rows"]
        if r["changed"]
    }
    assert changed == {(True, True)}
    # `parse_args()` with no options given, then `validate_args`: the option's default (store_false: True).
    assert table["defaults"] == {
        "base": {"outcome": "value", "value": "True"},
        "head": {"outcome": "value", "value": "True"},
    }
    assert "argv, sys.argv = sys.argv, sys.argv[:1]" in table["test"]
    sketch = _verified_sketch(first, path)
    _paste_and_review_again(repo, base, path, sketch, first, tmp_path, monkeypatch)


PARSER_BASE = """import argparse


def get_parser():
    parser = argparse.ArgumentParser(description="Serve a model")
    parser.add_argument("--num-layers", type=int, default=None)
    parser.add_argument("--offload", action="store_true")
    parser.add_argument("--no-pin-memory", action="store_false", dest="pin_memory")
    return parser


def validate_args(args):
    return args
"""
PARSER_RAISES_HEAD = PARSER_BASE.replace(
    "def validate_args(args):\n",
    "def validate_args(args):\n"
    "    if args.offload:\n"
    "        args.pin_memory = False\n"
    '    assert args.num_layers is not None, "--num-layers is required"\n',
)


def test_an_argparse_validation_that_rejects_the_default_options_is_a_p0(tmp_path: Path) -> None:
    review, doc = _review(tmp_path, PARSER_BASE, PARSER_RAISES_HEAD, "pkg/arguments.py")
    table = _only_table(doc)
    assert table["harness"]["kind"] == "argparse" and table["harness"]["defaults_call"] == "parser"
    last = "AssertionError: --num-layers is required"
    assert table["defaults"]["head"] == {"outcome": "raised", "value": last, "at": "pkg/arguments.py:15"}
    assert table["defaults"]["base"] == {"outcome": "value", "value": "True"}
    (p0,) = [f for f in review.findings if f.rule == "defaults-raise"]
    assert p0.severity.value == "P0" and (p0.path, p0.line) == ("pkg/arguments.py", 15)
    assert (
        p0.title
        == f"`validate_args(get_parser().parse_args([]))` with every default raises on the head: {last}"
    )
    assert p0.evidence[0] == (
        f"executed `validate_args(get_parser().parse_args([]))` from `pkg.arguments` on the head: {last}"
    )
    assert p0.evidence[1] == "on the base: True"
    assert review.status.value == "BLOCKING"
    assert not table["verified"]  # a test that fails on the head is offered to no one


PARSER_WRONG_BASE = PARSER_BASE.replace(
    "def validate_args(args):\n    return args\n",
    "def validate_args(args):\n    _keep_pinned(args)\n    return args\n\n\n"
    "def _keep_pinned(args):\n    args.pin_memory = True\n",
)
# The guarded write comes before a call that writes the field again: outside the table's model.
PARSER_WRONG_HEAD = PARSER_WRONG_BASE.replace(
    "def validate_args(args):\n",
    "def validate_args(args):\n    if args.offload:\n        args.pin_memory = False\n",
)


def test_an_argparse_row_the_table_gets_wrong_shows_the_executed_value_and_no_verified_sketch(
    tmp_path: Path,
) -> None:
    review, doc = _review(tmp_path, PARSER_WRONG_BASE, PARSER_WRONG_HEAD, "pkg/arguments.py")
    table = _only_table(doc)
    assert table["executed"] is True and table["harness"]["kind"] == "argparse"
    by_inputs = {(r["inputs"]["args.offload"], r["inputs"]["args.pin_memory"]): r for r in table["rows"]}
    wrong = by_inputs[(True, True)]
    assert wrong["predicted"]["head"] == "False"
    assert wrong["executed"]["head"] == {"outcome": "value", "value": "True"}
    assert wrong["table_wrong"] is True and wrong["row"] in table["wrong_rows"]
    assert by_inputs[(False, True)]["table_wrong"] is False
    said = "\n".join(n.message for n in review.notes)
    assert (
        f"The truth table of `args.pin_memory` (pkg/arguments.py:{table['line']}) was wrong in row "
        f"{wrong['row']} on the head: it predicted `False`, the code gives `True`"
    ) in said
    # Its test would fail on the head: missing-tests keeps the unexecuted sketch, not marked verified.
    assert table["verified"] is False
    for f in doc["findings"]:
        assert "verified" not in f["extra"], f
