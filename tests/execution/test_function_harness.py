"""The function harness (execution/harness_function.py) on real mini repositories, reviewed end to end.

A derivation in a module-level function or a staticmethod has no object to build: the generated test
calls the function with each row's values and reads the target from what it returned, from the
namespace it was given, or from its own local as it returned. Each case is a pull request reviewed
with the execution stage (the real sandbox, pytest, the head and the base).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from typing import Any

from reviewbot.execution.harness_function import function_harness
from reviewbot.execution.harness_function_code import function_build
from reviewbot.execution.table_tests import cases_of, generate
from reviewbot.lang.index import RepoIndex
from reviewbot.model.executed import Executed, ExecutedTable, Harness
from reviewbot.model.truthtable import Outcome, Row, TruthTable, Variable
from tests.execution.test_executed_tables import _only_table, _review

BUILD = """class Config:
    use_rope = True

    def __init__(self):
        self.cache = False


def build(cache=False):
    config = Config()
    if cache:
        config.use_rope = False
    return config
"""


def _head(base: str) -> str:
    return base.replace("if cache:", "if not cache:")


def _ran_as_predicted(table: dict[str, Any]) -> None:
    """Every row ran on both revisions and gave what the table predicted; the sketch is verified."""
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    assert table["rows"] and table["wrong_rows"] == [] and table["agreed"] == len(table["rows"])
    for row in table["rows"]:
        for side in ("base", "head"):
            assert row["predicted"][side] is not None, row
            assert row["executed"][side] == {"outcome": "value", "value": row["predicted"][side]}, row
    assert table["verified"] is True and table["fails_on_base"]


def test_a_module_function_returning_the_target_is_called_with_each_row(tmp_path: Path) -> None:
    base = BUILD.replace("    return config\n", "    return config.use_rope\n")
    review, doc = _review(tmp_path, base, _head(base))
    table = _only_table(doc)
    _ran_as_predicted(table)
    h = table["harness"]
    assert (h["kind"], h["owner"], h["function"], h["static"], h["reads"], h["target"]) == (
        "function",
        "build",
        "build",
        "",
        "return",
        "use_rope",
    )
    # `cache` is the function's parameter; `config.use_rope` (the incoming value) belongs to the object
    # the function builds itself: only the rows at the class's default (True) are run.
    assert h["args"] == ["cache"] and h["fixed"] == ["config.use_rope"]
    assert [r["inputs"] for r in table["rows"]] == [
        {"cache": True, "config.use_rope": True},
        {"cache": False, "config.use_rope": True},
    ]
    # `build()` with every default: False on the head (the changed default row), True on the base.
    assert table["defaults"] == {
        "base": {"outcome": "value", "value": "True"},
        "head": {"outcome": "value", "value": "False"},
    }
    assert "returned = build(**namespaces, **kwargs)" in table["test"]
    assert "types.SimpleNamespace(use_rope=returned)" in table["test"]
    ast.parse(table["test"])
    assert not any(f.rule == "defaults-raise" for f in review.findings)


def test_the_object_a_module_function_returns_is_where_the_target_is_read(tmp_path: Path) -> None:
    _, doc = _review(tmp_path, BUILD, _head(BUILD))
    table = _only_table(doc)
    _ran_as_predicted(table)
    assert (table["harness"]["reads"], table["harness"]["read_from"]) == ("returned", "config")


STATIC = '''import argparse


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--cache", action="store_true")
    return parser


class Model:
    @staticmethod
    def update(args):
        """Derive the options that follow from others."""
        if args.world_size > 1:
            args.distributed = True
        if args.cache:
            args.use_rope = False
'''


def test_a_staticmethod_writing_args_gets_a_namespace_with_the_parsers_defaults(tmp_path: Path) -> None:
    head = STATIC.replace("if args.cache:", "if args.cache and not args.strict:")
    review, doc = _review(tmp_path, STATIC, head)
    table = _only_table(doc)
    _ran_as_predicted(table)
    h = table["harness"]
    assert (h["owner"], h["function"], h["static"], h["reads"], h["read_from"]) == (
        "Model",
        "update",
        "staticmethod",
        "param",
        "args",
    )
    # The columns are attributes of `args`; `world_size` is read too and takes the parser's default;
    # `distributed` is only written, so it needs none. The columns' defaults: the parser's `cache`,
    # the table's for the others.
    assert h["namespaces"] == {
        "args": {"cache": "False", "strict": "False", "use_rope": "False", "world_size": "1"}
    }
    assert h["keywords"] == {
        "args.cache": "args.cache",
        "args.strict": "args.strict",
        "args.use_rope": "args.use_rope",
    }
    assert len(table["rows"]) == 8
    changed = [r for r in table["rows"] if r["changed"]]
    assert [r["inputs"] for r in changed] == [
        {"args.cache": True, "args.strict": True, "args.use_rope": True}
    ]
    assert (
        changed[0]["executed"]["base"]["value"] == "False"
        and changed[0]["executed"]["head"]["value"] == "True"
    )
    assert "Model.update(**namespaces, **kwargs)" in table["test"]
    assert (
        "NAMESPACES = {'args': {'cache': False, 'strict': False, 'use_rope': False, 'world_size': 1}}"
        in (table["test"])
    )
    assert not any(f.rule == "defaults-raise" for f in review.findings)


def test_a_local_that_feeds_the_return_is_read_off_the_frame_as_it_returns(tmp_path: Path) -> None:
    # `config` never leaves the function: only a dict built from it does. The target is read from the
    # function's own frame at its return event.
    base = BUILD.replace("    return config\n", "    return {'rope': config.use_rope}\n")
    _, doc = _review(tmp_path, base, _head(base))
    table = _only_table(doc)
    _ran_as_predicted(table)
    assert (table["harness"]["reads"], table["harness"]["read_from"]) == ("local", "config")
    assert "with _locals_at_return(build) as seen:" in table["test"]
    assert "sys.setprofile(hook)" in table["test"]
    assert "return _bound(seen, 'config')" in table["test"]


def test_a_required_parameter_no_column_gives_is_no_call_and_says_why(tmp_path: Path) -> None:
    # `model` read by `build`: a placeholder would decide the rows, so there is no call to make
    base = BUILD.replace("def build(cache=False):", "def build(model, cache=False):").replace(
        "    config = Config()\n", "    config = Config()\n    config.name = model\n"
    )
    _, doc = _review(tmp_path / "read", base, _head(base))
    table = _only_table(doc)
    assert table["executed"] is False and table["harness"] is None and table["rows"] == []
    assert table["reason"] == (
        "`build` requires `model` (no default) and no column of the table gives it; `build` reads `model`: "
        "a placeholder would decide the rows: there is no call to make"
    )
    assert table["test"] == ""
    assert doc["kpi"]["executed_tables"]["executed"] == 0


def test_a_required_parameter_the_function_never_reads_gets_a_placeholder(tmp_path: Path) -> None:
    base = BUILD.replace("def build(cache=False):", "def build(model: str, cache=False):")
    _, doc = _review(tmp_path, base, _head(base))
    table = _only_table(doc)
    _ran_as_predicted(table)
    assert table["harness"]["given"] == {"model": "''"}
    assert "GIVEN = {'model': ''}" in table["test"]


OVERRIDE = """from dataclasses import dataclass


@dataclass
class Override:
    opt: str = ""
    fast: bool = False

    @classmethod
    def parse(cls, fast=False, source=""):
        if fast:
            return Override(opt="O3", fast=fast)
        return Override(opt="O0", fast=fast)
"""


def _override_table(function: str) -> TruthTable:
    """The table of `Override.opt` as the constructor keyword `parse` gives (one column: `fast`)."""
    rows = tuple(
        Row(
            {"fast": fast},
            Outcome("const", "'O0'"),
            Outcome("const", "'O3'" if fast else "'O0'"),
            fast,
            not fast,
        )
        for fast in (True, False)
    )
    fast = Variable("fast", "bool", (True, False), default=False, default_from="pkg/o.py:10")
    return TruthTable(
        "Override.opt", function, "pkg/o.py", 11, "python", ("fast",), (fast,), None, rows, 2, False
    )


def test_a_classmethod_returning_a_construction_is_read_off_the_object_it_returns() -> None:
    tree = ast.parse(OVERRIDE)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    found = function_harness(_override_table("Override.parse"), tree, ("", "pkg.o"), cls, {"Override"})
    assert isinstance(found, Harness), found
    # `cls` is no parameter the row gives; `opt` is a keyword of the `Override(...)` every return builds.
    assert (found.static, found.args, found.reads, found.read_from, found.target) == (
        "classmethod",
        ("fast",),
        "returned",
        "Override",
        "opt",
    )
    assert found.construction == "Override.parse()"
    code = function_build(found)
    assert "returned = Override.parse(**namespaces, **kwargs)" in code and code.rstrip().endswith(
        "return returned"
    )


def test_a_called_function_raising_on_its_defaults_is_no_defaults_raise() -> None:
    # A function called with every default is no start-up path the project is known to take: its raise
    # is the row's executed value, never a P0 about the defaults (as for the method harness).
    tree = ast.parse(OVERRIDE)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    found = function_harness(_override_table("Override.parse"), tree, ("", "pkg.o"), cls, {"Override"})
    assert isinstance(found, Harness) and found.called
    raised = Executed("raised", "AssertionError: fast needs a GPU", "pkg/o.py:12")
    table = ExecutedTable("Override.opt", "Override.parse", "pkg/o.py", 11, found, defaults_head=raised)
    assert table.ran and not table.defaults_raise


def test_a_string_outcome_with_a_dot_imports_nothing_and_the_test_compiles() -> None:
    # `'./assets/hf'` is a string, not `Enum.MEMBER`: only the callee is imported from the module.
    plain = _override_table("Override.parse")
    rows = tuple(replace(r, head=Outcome("const", "'./assets/hf'")) for r in plain.rows)
    table = replace(plain, rows=rows)
    tree = ast.parse(OVERRIDE)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    found = function_harness(table, tree, ("", "pkg.o"), cls, {"Override"})
    assert isinstance(found, Harness), found
    code = generate(table, found, cases_of(table, found, RepoIndex()))
    compile(code, "test_generated.py", "exec")
    assert "\nfrom pkg.o import Override\n" in code
    assert "pytest.param({'fast': True}, './assets/hf', id='r0')" in code
