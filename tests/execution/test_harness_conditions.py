"""Comparison columns and placeholders (execution/harness_conditions.py, harness_placeholder.py) on real
mini repositories, reviewed end to end (the real sandbox, pytest, the head and the base).

A column that compares a keyword with a literal (`"fast" == mode`) is run by giving the keyword a value
that makes the row: its default when that does, else the literal the table names; a row that no such
value gives is skipped, never counted. A required argument that the code run never reads gets a
placeholder of its annotated type; one that it reads leaves the table without a harness.
"""

from __future__ import annotations

from pathlib import Path

from tests.execution.test_executed_tables import _only_table, _review
from tests.execution.test_harness import _harness
from tests.execution.test_table_harnesses import ARGS_BASE

MODE = """from dataclasses import dataclass


@dataclass
class Config:
    seed: int
    mode: str = "slow"
    use_rope: bool = True

    def __post_init__(self):
        if self.mode == "fast":
            self.use_rope = True
"""
MODE_HEAD = MODE.replace("self.use_rope = True\n", "self.use_rope = False\n")


def test_a_comparison_column_sets_its_keyword_and_a_placeholder_fills_an_unread_required_field(
    tmp_path: Path,
) -> None:
    _, doc = _review(tmp_path, MODE, MODE_HEAD)
    table = _only_table(doc)
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    h = table["harness"]
    # `seed` is required, no call gives it, and `__post_init__` never reads it: a placeholder
    assert h["given"] == {"seed": "0"} and h["given_from"].startswith("placeholders")
    # the column keys its keyword by the comparison the generated test solves (`mode` = "fast" or not)
    assert h["keywords"] == {'"fast" == mode': "'fast' == mode", "use_rope": "use_rope"}
    assert "CONDITIONS = {" in table["test"] and "def _solved(row):" in table["test"]
    rows = {tuple(sorted(r["inputs"].items())): r for r in table["rows"]}
    assert len(rows) == 4 and table["wrong_rows"] == []
    for row in table["rows"]:
        assert row["executed"]["head"] == {"outcome": "value", "value": row["predicted"]["head"]}, row
        assert row["executed"]["base"] == {"outcome": "value", "value": row["predicted"]["base"]}, row
    assert table["verified"] is True


def test_a_required_field_the_derivation_reads_gets_no_placeholder(tmp_path: Path) -> None:
    base = MODE.replace(
        "    def __post_init__(self):\n",
        "    def __post_init__(self):\n        self.name = f'run-{self.seed}'\n",
    )
    head = base.replace("self.use_rope = True\n", "self.use_rope = False\n")
    _, doc = _review(tmp_path, base, head)
    table = _only_table(doc)
    assert table["executed"] is False and table["harness"] is None
    assert "reads `seed`: a placeholder would decide the rows" in table["reason"], table["reason"]


def test_a_row_no_named_value_gives_is_skipped_not_counted(tmp_path: Path) -> None:
    base = MODE.replace('mode: str = "slow"', "mode: str | None = None").replace(
        'if self.mode == "fast":', "if self.mode is not None:"
    )
    head = base.replace("self.use_rope = True\n", "self.use_rope = False\n")
    _, doc = _review(tmp_path, base, head)
    table = _only_table(doc)
    assert table["executed"] is True, table["reason"]
    column = next(k for k in table["rows"][0]["inputs"] if "mode" in k)
    for row in table["rows"]:
        head = row["executed"]["head"]
        if row["inputs"][column]:  # `mode is not None`: the table names no other value of `mode`
            assert head["outcome"] == "not_run" and row["agrees"]["head"] is None, row
        else:  # the default None gives it: the row runs as the table says
            assert head == {"outcome": "value", "value": row["predicted"]["head"]}, row
    assert table["wrong_rows"] == []
    assert sum(1 for r in table["rows"] if r["executed"]["head"]["outcome"] == "value") == 2


NESTED = """from dataclasses import dataclass, field


@dataclass
class Eplb:
    window: int = 1000


@dataclass
class Parallel:
    eplb_mode: str | None = None
    eplb_config: Eplb = field(default_factory=Eplb)

    def __post_init__(self):
        if self.eplb_mode == "dynamic":
            self.eplb_config.window = 2000
"""


def test_a_nested_target_is_read_off_the_attribute_holding_it(tmp_path: Path) -> None:
    head = NESTED.replace("self.eplb_config.window = 2000\n", "self.eplb_config.window = 3000\n")
    _, doc = _review(tmp_path, NESTED, head)
    table = _only_table(doc)
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    assert "READ_FROM = ('eplb_config',)" in table["test"]
    assert table["wrong_rows"] == []
    values = {
        next(iter(r["inputs"].values())): (
            r["predicted"]["head"],
            r["executed"]["head"],
            r["executed"]["base"],
        )
        for r in table["rows"]
    }
    # `"dynamic" == eplb_mode` true: the literal the table names; false: the default None (the window
    # keeps the value its factory gives: no literal prediction, the value is recorded)
    assert values[True] == (
        "3000",
        {"outcome": "value", "value": "3000"},
        {"outcome": "value", "value": "2000"},
    )
    assert values[False] == (
        None,
        {"outcome": "value", "value": "1000"},
        {"outcome": "value", "value": "1000"},
    )
    assert table["verified"] is True


def test_an_option_compared_with_a_literal_is_set_to_a_value_that_makes_the_row(tmp_path: Path) -> None:
    # Megatron's `1 == args.tensor_model_parallel_size`: the option is given its default (2) when that
    # makes the row (false), else the literal the table names (1)
    base = ARGS_BASE.replace(
        '    group.add_argument("--num-layers", type=int, default=None, help="Number of transformer layers.")\n',
        '    group.add_argument("--num-layers", type=int, default=None, help="Number of transformer layers.")\n'
        '    group.add_argument("--tensor-model-parallel-size", type=int, default=2)\n',
    )
    guard = '        print(f"using world size: {args.world_size}")\n'
    base = base.replace(
        guard,
        guard + "    if args.tensor_model_parallel_size == 1:\n        args.sequence_parallel = False\n",
    )
    head = base.replace("        args.sequence_parallel = False\n", "        args.sequence_parallel = True\n")
    _, doc = _review(tmp_path, base, head, path="pkg/arguments.py")
    table = _only_table(doc)
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    h = table["harness"]
    assert h["kind"] == "argparse" and h["keywords"]["1 == args.tensor_model_parallel_size"] == (
        "1 == tensor_model_parallel_size"
    )
    assert table["wrong_rows"] == []
    for row in table["rows"]:
        assert row["executed"]["head"] == {"outcome": "value", "value": row["predicted"]["head"]}, row
    # true: 1 (the literal); false: the default 2; each with sequence_parallel given both ways
    assert len(table["rows"]) == 4 and table["verified"] is True


REGISTRY = """from dataclasses import dataclass, field


class Optimizer:
    @dataclass
    class Config:
        lr: float = 0.001


@dataclass
class TrainerConfig:
    steps: int = 1
    optimizer: Optimizer.Config = field(default_factory=Optimizer.Config)


def debug_config() -> TrainerConfig:
    return TrainerConfig(steps=10, optimizer=Optimizer.Config(lr=0.0008))
"""


def test_a_keyword_of_a_construction_nested_in_the_one_returned_is_read_through_its_keywords(
    tmp_path: Path,
) -> None:
    head = REGISTRY.replace("Config(lr=0.0008)", "Config(lr=0.002)")
    _, doc = _review(tmp_path, REGISTRY, head)
    # two tables: `TrainerConfig.optimizer` (the changed keyword) and `Optimizer.Config.lr` (in it)
    (table,) = [t for t in doc["executed_tables"] if t["target"] == "Optimizer.Config.lr"]
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    h = table["harness"]
    assert (h["kind"], h["reads"], h["read_from"], h["target"]) == (
        "function",
        "returned",
        "returned.optimizer",
        "lr",
    )
    assert "return _walk(returned, ('optimizer',))" in table["test"]
    (row,) = table["rows"]
    assert row["executed"] == {
        "head": {"outcome": "value", "value": "0.002"},
        "base": {"outcome": "value", "value": "0.0008"},
    }
    assert row["predicted"]["head"] == "0.002" and table["wrong_rows"] == []


def test_a_required_init_var_that_post_init_reads_gets_no_placeholder(tmp_path: Path) -> None:
    # An `InitVar` reaches `__post_init__` as a parameter, not as `self.seed`: reading it is a read.
    base = MODE.replace("    seed: int\n", "    seed: InitVar[int]\n").replace(
        "from dataclasses import dataclass", "from dataclasses import InitVar, dataclass"
    )
    base = base.replace(
        "    def __post_init__(self):\n", "    def __post_init__(self, seed):\n        self.name = seed\n"
    )
    head = base.replace("self.use_rope = True\n", "self.use_rope = False\n")
    found = _harness(tmp_path, "pkg/config.py", base, head)
    assert isinstance(found, str) and "reads `seed`: a placeholder would decide the rows" in found, found
    unread = base.replace("        self.name = seed\n", "")
    found = _harness(tmp_path / "unread", "pkg/config.py", unread, unread.replace("= True\n", "= False\n"))
    assert not isinstance(found, str) and found.given == (("seed", "0"),), found


SETUP_TEST = """import sys

from pkg.arguments import parse_args, validate_args


def test_validates():
    sys.argv = ["train.py"]
    args = parse_args()
    args.micro_batch_size = 4
    validate_args(args)
"""


def test_the_options_a_repository_test_sets_before_validating_are_the_configuration(tmp_path: Path) -> None:
    # `validate_args` asserts an option every launch passes: the parser's defaults alone raise
    guard = '        print(f"using world size: {args.world_size}")\n'
    base = ARGS_BASE.replace(
        '    group.add_argument("--num-layers", type=int, default=None, help="Number of transformer layers.")\n',
        '    group.add_argument("--num-layers", type=int, default=None, help="Number of transformer layers.")\n'
        '    group.add_argument("--micro-batch-size", type=int, default=None)\n',
    ).replace(guard, guard + "    assert args.micro_batch_size is not None\n")
    base = base.replace(
        "    return args\n\n\ndef _add_network",
        "    if args.sequence_parallel:\n        args.num_layers = 2\n    return args\n\n\ndef _add_network",
    )
    head = base.replace("        args.num_layers = 2\n", "        args.num_layers = 3\n")
    _, doc = _review(tmp_path, base, head, path="pkg/arguments.py", others={"tests/test_args.py": SETUP_TEST})
    table = _only_table(doc)
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    h = table["harness"]
    assert h["given"] == {"micro_batch_size": "4"} and h["given_from"] == "tests/test_args.py:10"
    assert "GIVEN = {'micro_batch_size': 4}" in table["test"]
    assert table["wrong_rows"] == [] and table["verified"] is True
    predicted = [r for r in table["rows"] if r["predicted"]["head"] is not None]
    assert predicted and all(
        r["executed"]["head"] == {"outcome": "value", "value": r["predicted"]["head"]} for r in predicted
    )
    assert table["agreed"] == len(predicted)
