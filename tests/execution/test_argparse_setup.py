"""Which of a repository's own configurations an argparse table is validated with (issue 25), through a
real round: a real git repository, the sandbox, pytest (execution/harness_argparse_sites.py)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.execution.harness_argparse_sites import validated_setup
from tests.execution.test_executed_tables import _only_table, _review

# Megatron's shape: the parser's defaults are no configuration the validation accepts.
ARGS_BASE = """import argparse


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-layers", type=int, default=None)
    parser.add_argument("--micro-batch-size", type=int, default=None)
    parser.add_argument("--offload", action="store_true")
    parser.add_argument("--no-pin-memory", action="store_false", dest="pin_memory")
    return parser


def validate_args(args):
    assert args.micro_batch_size is not None
    assert args.num_layers is not None
    return args
"""
ARGS_HEAD = ARGS_BASE.replace(
    "    return args\n", "    if args.offload:\n        args.pin_memory = False\n    return args\n"
)
# The first test sets the micro batch size from its parameter: the generated test cannot give it, and
# the parser's default (None) is rejected. The second sets everything to literals.
FROM_PARAMETER = """from pkg.arguments import get_parser, validate_args


def test_sizes(mbs=4):
    args = get_parser().parse_args([])
    args.num_layers = 2
    args.micro_batch_size = mbs
    validate_args(args)
"""
ALL_LITERALS = """from pkg.arguments import get_parser, validate_args


def test_small():
    args = get_parser().parse_args([])
    args.num_layers = 2
    args.micro_batch_size = 1
    validate_args(args)
"""


def test_the_site_the_generated_test_reproduces_whole_is_taken_and_the_rows_run(tmp_path: Path) -> None:
    others: dict[str, str | bytes | None] = {
        "tests/test_a_sizes.py": FROM_PARAMETER,
        "tests/test_b_small.py": ALL_LITERALS,
    }
    _, doc = _review(tmp_path, ARGS_BASE, ARGS_HEAD, "pkg/arguments.py", others)
    table = _only_table(doc)
    # ruleid: taken from the test whose every option is a literal, not the earlier one
    assert table["harness"]["given_from"] == "tests/test_b_small.py:8"
    assert table["harness"]["given"] == {"num_layers": "2", "micro_batch_size": "1"}
    assert table["executed"] is True and table["wrong_rows"] == []
    assert table["defaults"]["head"] == {"outcome": "value", "value": "True"}
    assert all(r["executed"]["head"]["outcome"] == "value" for r in table["rows"])
    assert table["agreed"] == len(table["rows"]) == 4


def test_a_test_files_site_goes_before_a_tools_and_fewer_parameters_before_more() -> None:
    tool = """def main(argv):
    args = get_parser().parse_args(argv)
    args.num_layers = 1
    validate_args(args)
"""
    two_params = FROM_PARAMETER.replace("args.num_layers = 2", "args.num_layers = layers")
    texts = [
        ("tools/convert.py", tool),
        ("tests/test_a.py", two_params),
        ("tests/test_b.py", FROM_PARAMETER),
    ]
    got = validated_setup("validate_args", texts)
    # ok: the tool's site sets nothing from a parameter, but it is no test; of the tests, one parameter
    assert got == ((("num_layers", "2"),), "tests/test_b.py:8")
    assert validated_setup("validate_args", texts[:1]) == ((("num_layers", "1"),), "tools/convert.py:4")
