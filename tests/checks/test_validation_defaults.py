"""The defaults behind validation-rejects-default: argparse's default of each option, the builtins the
evaluator reads, and what a call handed the namespace writes before a check."""

from __future__ import annotations

import ast

import pytest

from reviewbot.analysis.defaults.arg_options import argparse_defaults, class_defaults
from reviewbot.analysis.defaults.evaluate import Evaluator, Operand, Unknown
from reviewbot.analysis.defaults.written import ANY, Writes

PARSER = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--mock-data", action="store_true")
parser.add_argument("--no-fuse", action="store_false", dest="fuse")
parser.add_argument("--data-path", nargs="*")
parser.add_argument("--persist", action=argparse.BooleanOptionalAction)
parser.add_argument("--max-len", type=int, default="8")
parser.add_argument("--impl", default="none", choices=["none", "local"])
parser.add_argument("--workers", default=os.cpu_count())
parser.add_argument("--load", required=True)
parser.add_argument("checkpoint")
parser.add_argument("extra", nargs="?")
parser.set_defaults(impl="local")
"""


def test_argparse_defaults_follow_argparse() -> None:
    # `how` quotes the source as written (double quotes kept), for evidence; "" when nothing sets it
    found = [(d.dest, d.value, d.how) for d in argparse_defaults(ast.parse(PARSER), PARSER)]
    assert found == [
        ("mock_data", "False", 'action="store_true"'),
        ("fuse", "True", 'action="store_false"'),
        ("data_path", "None", ""),
        ("persist", "None", "action=argparse.BooleanOptionalAction"),
        ("max_len", "8", 'default="8"'),  # argparse applies type=int to a string default
        ("impl", "'none'", 'default="none"'),
        # a required option and a positional must be given: no default a launch can take
        ("extra", "None", ""),  # an optional positional (nargs="?") defaults like an option
        ("impl", "'local'", 'impl="local"'),  # set_defaults after the option: replaces it
    ]
    assert [d.set_default for d in argparse_defaults(ast.parse(PARSER))][-1] is True


def test_class_defaults_read_an_imported_config_class() -> None:
    parser = "from pkg.config import GraphConfig as G\nfactory(G)\n"
    config = "from dataclasses import dataclass, field\n@dataclass\nclass GraphConfig:\n"
    config += "    impl: str = 'none'\n    layers: list = field(default_factory=list)\n    depth: int = field(default=2)\n"
    files = {"pkg/config.py": config}
    found = list(class_defaults("pkg/args.py", ast.parse(parser), {"G"}, files.get))
    assert [(f.name, f.value, f.path, f.line) for f in found] == [
        ("impl", "'none'", "pkg/config.py", 4),
        ("depth", "2", "pkg/config.py", 6),
    ]


def _defaults(values: dict[str, str]) -> Evaluator:
    return Evaluator(lambda t: Operand(t, values[t], "a.py", 1) if t in values else None)


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("args.mock_data + bool(args.data_path) + any([args.train, args.valid]) == 1", False),
        ("args.mock_data + bool(args.data_path) + any([args.train, args.valid]) <= 1", True),
        ("all([not args.mock_data, args.data_path is None]) and len(args.name) == 4", True),
    ],
)
def test_evaluator_reads_builtins_that_only_read(expr: str, value: bool) -> None:
    ev = _defaults(
        {"args.mock_data": "False", "args.data_path": "None", "args.train": "None", "args.valid": "None"}
        | {"args.name": "'none'"}
    )
    assert ev(ast.parse(expr, mode="eval").body) is value


def test_evaluator_does_not_call_anything_else() -> None:
    with pytest.raises(Unknown):
        _defaults({"args.x": "1"})(ast.parse("os.path.exists(args.x)", mode="eval").body)


MODULE = """
from pkg.util import update_format
from elsewhere import finalize

def load_project(args):
    if args.project_dir is None:
        return
    args.data_path = [args.project_dir]

def load_cache(args):
    if args.mock_data:
        return
    args.data_path = ["cache"]

def validate(args):
    load_project(args)
    update_format(args)
    getattr(args, "x", None)
    args.paths.append("p")
    CHECK = 1
    load_cache(args)
    finalize(args)
    CHECK = 2
"""


def test_calls_handed_the_namespace_are_followed_to_the_defaults_early_exit() -> None:
    tree = ast.parse(MODULE)
    validate = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "validate")
    defaults = {"args.project_dir": "None", "args.mock_data": "False", "args.ckpt_format": "None"}
    files = {"pkg/util.py": "def update_format(args):\n    args.ckpt_format = args.ckpt_format or 'torch'\n"}
    writes = Writes(
        "pkg/args.py",
        tree,
        "",
        lambda t: Operand(t, defaults[t], "a.py", 1) if t in defaults else None,
        files.get,
    )
    first, second = (n.lineno for n in ast.walk(validate) if isinstance(n, ast.Assign))
    # load_project returns early on the defaults; update_format (imported) writes ckpt_format; getattr reads
    assert writes.before(validate, first) == {"args.ckpt_format", "args.paths"}
    # load_cache does not return early on the defaults; finalize comes from outside the repository
    assert writes.before(validate, second) == {"args.ckpt_format", "args.paths", "args.data_path", ANY}


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("(args.workers or 4) < 2", False),  # `or` gives the deciding operand: 4, not True
        ("args.workers or 4", 4),
        ("args.level and 5", 0),
        ("not (args.workers or args.level)", True),
    ],
)
def test_and_or_give_the_deciding_operand_as_python_does(expr: str, value: object) -> None:
    ops = {
        "args.workers": Operand("args.workers", "None", "a.py", 1),
        "args.level": Operand("args.level", "0", "a.py", 2),
    }
    assert Evaluator(ops.get)(ast.parse(expr, mode="eval").body) == value
