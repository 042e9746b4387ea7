"""default-changed's new-switch judgement: which condition reads test the switch itself."""

from __future__ import annotations

import pytest

from reviewbot.analysis.defaults.switch_atoms import switch_atom
from reviewbot.analysis.sides import Side
from reviewbot.lang.facts import FieldRead, Lang
from reviewbot.model.change import Hunk


def _side(line: str) -> Side:
    hunk = Hunk(1, 0, 1, 1, "", ((1, line),), ())
    return Side("a.py", "a.py", None, None, None, None, frozenset(), frozenset({1}), (hunk,))


@pytest.mark.parametrize(
    ("line", "expr", "tests_it"),
    [
        ("if self.config.x:", "config.x", True),
        ("    if (params->use_mmap && ok) {", "params->use_mmap", True),
        ("if a and self.cfg.x:", "cfg.x", True),
        ("if (cfg::x) {", "x", True),
        ("if extra := self.config.x:", "config.x", True),  # the walrus takes the truth value
        ("if self.config.x is True:", "config.x", True),
        ("if (cfg->x != 0) {", "cfg->x", True),
        ("if (params.warmup)  // the old warm-up", "params.warmup", True),  # the if's own `)`
        ("if (cfg.x) ++n;", "cfg.x", True),
        ("y = cfg.x ? a : b;", "cfg.x", True),
        ("if n < cfg.x_limit and cfg.x:", "cfg.x", True),  # not the prefix of a longer name
        # an operand: the comparison decides, not the switch
        ("if (p->n < cfg.x + 1) {", "cfg.x", False),
        ("if n < seq + self.cfg.x:", "cfg.x", False),
        ("if (x == p->flag) {", "flag", False),
        ("if self.cfg.x in (1, 2):", "cfg.x", False),
        ("if cfg.x == 2:", "cfg.x", False),
        ("if cfg.x is None:", "cfg.x", False),
    ],
)
def test_a_switch_is_tested_only_as_a_truth_value(line: str, expr: str, tests_it: bool) -> None:
    read = FieldRead(expr.split(".")[-1], expr, "a.py", 1, "f", Lang.PYTHON, in_condition=True)
    assert switch_atom(read, _side(line)) is tests_it
