"""Predicate normalisation: C++ and Python spellings of one condition agree, different ones do not."""

from __future__ import annotations

import pytest

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.predicate import Atom, Not, Pred, canonical_operand, loose_key
from tests.lang.helpers import parse_cpp, parse_py


def cpp_cond(cond: str) -> Pred:
    [use] = parse_cpp(f"void f() {{\n    if ({cond}) {{ g(); }}\n}}\n").predicates
    return use.pred


def py_cond(cond: str) -> Pred:
    [use] = parse_py(f"def f(self):\n    if {cond}:\n        g()\n").predicates
    return use.pred


SAME = [
    (
        "config.rope_config.style == RopeStyle::No && !use_kvcache",
        "self.attn_config.rope_config.style == RopeStyle.No and not self.use_kvcache",
    ),
    (
        "!use_kvcache && RopeStyle::No == cfg->rope_config.style",
        "not self.use_kvcache and self.style == RopeStyle.No",
    ),
    ("(a.x || b.y) && !(c)", "not c and (b.y or a.x)"),
    ("a.flag == false", "not a.flag"),
    ("a.flag != true", "a.flag is False"),
    ("this->ptr != nullptr", "self.ptr is not None"),
    ("!(n.count >= 3)", "n.count < 3"),
    ("x.a && (x.b && x.c)", "x.c and x.b and x.a"),
    ("!!cfg.on", "not not cfg.on"),
]

DIFFERENT = [
    ("a && !b", "a and b"),
    ("style == RopeStyle::No", "style == RopeStyle.Base"),
    ("a || b", "a and b"),
    ("!(a && b)", "not a and not b"),
    ("n.count > 3", "n.count >= 3"),
]


@pytest.mark.parametrize(("cpp", "py"), SAME)
def test_cpp_and_python_spellings_have_one_loose_key(cpp: str, py: str) -> None:
    assert loose_key(cpp_cond(cpp)) == loose_key(py_cond(py))


@pytest.mark.parametrize(("cpp", "py"), DIFFERENT)
def test_different_predicates_keep_different_keys(cpp: str, py: str) -> None:
    assert loose_key(cpp_cond(cpp)) != loose_key(py_cond(py))
    assert loose_key(cpp_cond(cpp)) != loose_key(
        cpp_cond(py.replace(" and ", " && ").replace(" or ", " || "))
    )


def test_structure_of_the_normalised_tree() -> None:
    assert cpp_cond("config.rope_config.style == RopeStyle::No && !use_kvcache").key == (
        "!use_kvcache && RopeStyle.No == config.rope_config.style"
    )
    assert py_cond("a < b < c").key == "a < b && b < c"
    assert py_cond("k not in table") == Not(Atom("k in table"))
    assert cpp_cond("f(a, b) && g()").key == "f(a,b) && g()"
    assert py_cond("any(x for x in xs)").key == "any(x for x in xs)"


@pytest.mark.parametrize(
    "text",
    ["config.need_rope_kv_cache", "self.use_kvcache", "this->flag_", "RopeStyle::No", "true", "nullptr"],
)
def test_canonical_expr_agrees_with_canonical_operand_on_operands(text: str) -> None:
    assert canonical_expr(text) == canonical_operand(text)


def test_canonical_expr_keeps_word_spacing() -> None:
    assert canonical_expr("not  self.qk_norm") == "not qk_norm"
    assert canonical_expr("a if c else b") == "a if c else b"
    assert (
        canonical_expr("qk_norm || (x == RopeStyle::No) ? false : true")
        == "qk_norm||(x==RopeStyle.No)?False:True"
    )
