"""Truth tables as the report spells them: outcome cells per language, the JSON report's table document."""

from __future__ import annotations

import json

from reviewbot.model.truthtable import OTHER, Outcome, Row, TruthTable, Variable
from reviewbot.report.truth_tables import shown, table_json


def test_an_outcome_cell_keeps_input_or_spells_the_value_in_the_codes_language() -> None:
    assert shown(Outcome("input", "cfg.flag"), "cpp") == "keeps input"
    assert shown(Outcome("const", "False"), "cpp") == "false"
    assert shown(Outcome("const", "False"), "python") == "False"
    assert shown(Outcome("expr", "cfg.auto"), "cpp") == "cfg.auto"


def test_table_json_has_the_shape_of_the_stored_reports() -> None:
    style = Variable("cfg.style", "enum", ("No", OTHER), "RopeStyle", default="No", default_from="a.h:3")
    kept = Variable("cfg.flag", "bool", (True, False), is_input=True, default=True, default_from="b.h:9")
    keeps = Outcome("input", "cfg.flag")
    table = TruthTable(
        target="cfg.flag",
        function="Config::derive",
        path="a.cc",
        line=20,
        lang="cpp",
        atoms=("RopeStyle.No == cfg.style",),
        variables=(style, kept),
        input="cfg.flag",
        rows=(
            Row({"cfg.style": "No", "cfg.flag": True}, keeps, Outcome("const", "False"), True, True),
            Row({"cfg.style": OTHER, "cfg.flag": True}, keeps, keeps, False, False),
        ),
        row_count=4,
        truncated=True,
        note="4 rows exceed the cap of 2: showing only the rows the change touches.",
    )
    doc = json.loads(json.dumps(table_json(table)))
    assert list(doc) == [
        *("target", "function", "path", "line", "atoms", "inputs", "input", "rows"),
        *("row_count", "changed_rows", "truncated", "note"),
    ]
    assert doc["inputs"][0] == {
        "name": "cfg.style",
        "kind": "enum",
        "values": ["No", OTHER],
        "enum": "RopeStyle",
        "input": False,
        "default": "No",
        "default_from": "a.h:3",
    }
    assert doc["inputs"][1]["input"] is True and doc["input"] == "cfg.flag"
    assert doc["rows"][0] == {
        "inputs": {"cfg.style": "No", "cfg.flag": True},
        "base": "keeps input",
        "head": "false",
        "changed": True,
        "default": True,
    }
    assert (doc["row_count"], doc["changed_rows"], doc["truncated"]) == (4, 1, True)
