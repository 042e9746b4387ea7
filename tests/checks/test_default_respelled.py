"""analysis.defaults.respelled: a default spelled otherwise is no change; a named constant is judged by
the value the change gives it."""

from __future__ import annotations

import pytest

from reviewbot.analysis.defaults.respelled import silent_reason
from reviewbot.analysis.sides import Side
from reviewbot.model.change import Hunk


def _side(*added: str) -> Side:
    hunk = Hunk(1, 0, 1, len(added), "", tuple(enumerate(added, 1)), ())
    return Side(
        "a.h", "a.h", None, None, None, None, frozenset(), frozenset(range(1, len(added) + 1)), (hunk,)
    )


@pytest.mark.parametrize(
    ("was", "now", "defined", "reason"),
    [
        ("-1", "TOKEN_NULL", "#define TOKEN_NULL -1", "same value"),
        ("-1", "TOKEN_NULL", "static const int TOKEN_NULL = -1;", "same value"),
        # a C++ bool replaced by an enum member the change does not define (`numa` becomes an enum)
        ("false", "GGML_NUMA_STRATEGY_DISABLED", "", "a named constant whose value is not known here"),
        ("false", "GGML_NUMA_STRATEGY_DISABLED", "    GGML_NUMA_STRATEGY_DISABLED = 0,", "same value"),
        ("false", "NUMA_SPREAD", "    NUMA_SPREAD = 1,", ""),  # the enum gives it another value: reported
        (
            "False",
            "GGML_NUMA_STRATEGY_DISABLED",
            "    GGML_NUMA_STRATEGY_DISABLED = 0,",
            "same value",
        ),  # canonical
        ('"lru"', "DEFAULT_POLICY", "", "a named constant whose value is not known here"),
        ("0", "MAX_BATCH", "#define MAX_BATCH 8", ""),  # defined otherwise: a real change, reported
        ("Metric(true)", "0", "", "the field's type changed"),
        ("None", '""', "", "None made the empty value"),
        ("0.8", "1.0", "", ""),
        ("NullOpt", "std.nullopt", "", "same value"),  # the same empty optional, another library's name
    ],
)
def test_silent_reason(was: str, now: str, defined: str, reason: str) -> None:
    sides = [_side(defined)] if defined else [_side("int x = 0;")]
    assert silent_reason("x", now, (was, now), sides) == reason
