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
