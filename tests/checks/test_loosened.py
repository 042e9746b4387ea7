"""defaults.loosened: a check the change only loosened rejects nothing its base version accepted."""

from __future__ import annotations

import ast

from reviewbot.analysis.defaults.loosened import loosened


def _check(src: str) -> tuple[ast.Assert | ast.Raise, ast.expr | None]:
    fn = ast.parse(src).body[0]
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            return node, node.test
        if isinstance(node, ast.If) and isinstance(node.body[0], ast.Raise):
            return node.body[0], node.test
    raise AssertionError("no check")


BASE_ASSERT = "def validate(args):\n    assert args.a or args.b, 'm'\n"
BASE_RAISE = "def validate(args):\n    if args.a:\n        raise ValueError('m')\n"


def test_an_assertion_that_gains_an_alternative_is_loosened() -> None:
    stmt, test = _check("def validate(args):\n    assert args.a or args.b or args.c == 'x', 'm2'\n")
    assert loosened(stmt, test, "validate", ast.parse(BASE_ASSERT))
    # the same alternatives, another function, or one alternative swapped: not a loosening
    stmt, test = _check("def validate(args):\n    assert args.a or args.c, 'm'\n")
    assert not loosened(stmt, test, "validate", ast.parse(BASE_ASSERT))
    stmt, test = _check("def other(args):\n    assert args.a or args.b or args.c, 'm'\n")
    assert not loosened(stmt, test, "other", ast.parse(BASE_ASSERT))
    assert not loosened(stmt, test, "other", None)


def test_a_raise_whose_condition_gains_a_conjunct_is_loosened() -> None:
    stmt, test = _check(
        "def validate(args):\n    if args.a and args.optimizer == 'muon':\n        raise ValueError('m')\n"
    )
    assert loosened(stmt, test, "Config.validate", ast.parse(BASE_RAISE))
    # an assertion is not a raise's base version, nor the other way round
    stmt, test = _check("def validate(args):\n    assert args.a or args.b or args.c, 'm'\n")
    assert not loosened(stmt, test, "validate", ast.parse(BASE_RAISE))
