"""A derivation's table in the markdown: the executed table in place of the predicted one when it ran in the
sandbox (each row's predicted outcome beside what ran, wrong and unbuilt rows marked), the predicted table
otherwise; the tests section adds them up; long executed tables are shortened like predicted ones."""

from __future__ import annotations

import json
import re
from typing import cast

from reviewbot.model.executed import Executed, ExecutedRow, ExecutedTable, Harness
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.kpi import Kpi
from reviewbot.model.review import ChecklistResult, Review, Status
from reviewbot.model.tests import TestSummary as Summary
from reviewbot.model.truthtable import Outcome, Row, TruthTable, Variable
from reviewbot.report.comment import CAPS, render_markdown
from reviewbot.report.render import render_json, stored_json
from reviewbot.report.shrink import Renderer, fit_report
from reviewbot.report.truth_tables import ShownTable, executed_rows

PATH, LINE, TARGET = "pkg/config.py", 10, "use_rope"
KEEPS, FALSE = Outcome("input", "use_rope"), Outcome("const", "False")
CACHE = Variable("cache", "bool", (True, False), default=False, default_from="pkg/config.py:4")
ROPE = Variable(
    "use_rope", "bool", (True, False), is_input=True, default=True, default_from="pkg/config.py:5"
)
HARNESS = Harness(
    path=PATH,
    module="pkg.config",
    import_root="",
    owner="EngineConfig",
    kind="dataclass",
    function="__post_init__",
    target=TARGET,
    keywords=(("cache", "cache"), ("use_rope", "use_rope")),
)
TESTS = Summary(
    ran=1, passed=1, failed=0, seconds=0.5, mutants=0, killed=0, survived=0,
    not_run=0, sandbox="unshare", isolation={}, reason_if_not_run="",
)  # fmt: skip


def _rows() -> tuple[Row, ...]:
    """cache × use_rope: the head sets use_rope False without a cache (the base keeps it)."""
    out = []
    for cache in (True, False):
        for rope in (True, False):
            head = KEEPS if cache else FALSE
            out.append(Row({"cache": cache, "use_rope": rope}, KEEPS, head, head != KEEPS and rope, False))
    return tuple(out)


TABLE = TruthTable(
    TARGET,
    "EngineConfig.__post_init__",
    PATH,
    LINE,
    "python",
    ("cache",),
    (CACHE, ROPE),
    "use_rope",
    _rows(),
    4,
    False,
)


def _value(text: str) -> Executed:
    return Executed("value", text)


def _as_predicted(i: int, row: Row) -> ExecutedRow:
    """The row run as the table predicts it on both sides."""
    base = repr(row.inputs["use_rope"])
    head = base if row.head.kind == "input" else row.head.text
    return ExecutedRow(i, row.inputs, row.changed, row.default, head, base, _value(head), _value(base))


def _executed(*rows: ExecutedRow, table: TruthTable = TABLE, **kw: object) -> ExecutedTable:
    fields: dict[str, object] = {"harness": HARNESS, "rows": rows, "defaults_head": _value("True")}
    fields.update(kw)
    return ExecutedTable(table.target, table.function, table.path, table.line, **fields)  # type: ignore[arg-type]


def _review(tables: list[TruthTable], executed: list[ExecutedTable]) -> Review:
    """A review whose one finding sits on the derivation: its table folds into the finding's details."""
    finding = Finding(
        rule="missing-tests",
        severity=Severity.P2,
        path=PATH,
        line=LINE,
        title="The new derivation `use_rope = False` has no test that pins it.",
        anchor="use_rope = False",
        evidence=("no test reads `use_rope`",),
        suggestion="Pin the changed row.",
    )
    return Review(
        status=Status.LGTM,
        base_sha="b" * 40,
        head_sha="c" * 40,
        merge_base="b" * 40,
        reviewed_at="2026-01-01 00:00 UTC",
        findings=[finding],
        checklist=ChecklistResult(),
        strengths=[],
        notes=[],
        kpi=cast(Kpi, {"coverage": 1.0}),  # the report shows what the KPI holds
        truth_tables=tables,
        executed_tables=executed,
        tests=TESTS,
    )


def _table_lines(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| ")]


def _tests_section(markdown: str) -> str:
    return markdown.split("<summary>Tests executed</summary>", 1)[1].split("</details>", 1)[0]


def test_a_table_run_as_predicted_replaces_the_predicted_one_with_both_values_per_row() -> None:
    executed = _executed(*(_as_predicted(i, r) for i, r in enumerate(TABLE.rows)))
    markdown = render_markdown(_review([TABLE], [executed]), budget=60_000)
    lines = _table_lines(markdown)
    # one table: a header and a line per row, never the predicted table beside it
    assert lines[0] == "| `cache` | `use_rope` | base | ran on base | head | ran on head | |"
    assert len(lines) == 1 + len(TABLE.rows)
    assert markdown.count(f"`{TARGET}` @ `{PATH}:{LINE}`") == 1
    assert "| False | True | keeps input | True | False | False | **changed** |" in lines
    assert "| True | False | keeps input | False | keeps input | False |  |" in lines
    assert (
        "run in the sandbox (dataclass harness): 4 of 4 rows as predicted on the head and the base."
        in markdown
    )
    assert "the table was wrong here" not in markdown and "not built" not in markdown
    tests = _tests_section(markdown)
    assert "Truth tables run in the sandbox: 1; 4 of 4 rows as predicted on the head and the base." in tests
    assert "wrongly" not in tests and "| " not in tests  # the rows are in the table, not repeated here
    doc = render_json(_review([TABLE], [executed]))
    # the JSON keeps both: the predicted rows and the executed ones
    assert len(doc["truth_tables"][0]["rows"]) == 4 and len(doc["executed_tables"][0]["rows"]) == 4


def test_a_row_the_table_got_wrong_shows_both_values_and_says_so() -> None:
    rows = [_as_predicted(i, r) for i, r in enumerate(TABLE.rows)]
    # (cache False, use_rope True): predicted False on the head; the code kept True
    rows[2] = ExecutedRow(
        2, TABLE.rows[2].inputs, True, False, "False", "True", _value("True"), _value("True")
    )
    markdown = render_markdown(_review([TABLE], [_executed(*rows)]), budget=60_000)
    wrong = "**head: predicted `False`, ran `True`: the table was wrong here**"
    assert f"| False | True | keeps input | True | False | True | **changed** {wrong} |" in _table_lines(
        markdown
    )
    assert markdown.count("the table was wrong here") == 1
    assert (
        "3 of 4 rows as predicted on the head and the base. 1 row(s) the prediction got wrong (marked)."
        in markdown
    )
    assert "3 of 4 rows as predicted on the head and the base. 1 row(s) predicted wrongly." in _tests_section(
        markdown
    )


def test_a_row_that_could_not_be_built_is_marked_and_not_called_wrong() -> None:
    rows = [_as_predicted(i, r) for i, r in enumerate(TABLE.rows)]
    why = "TypeError: __init__() missing 1 required positional argument: 'model'"
    unbuilt = Executed("not_run", f"could not be built: {why}")
    rows[0] = ExecutedRow(0, TABLE.rows[0].inputs, False, False, "True", "True", unbuilt, _value("True"))
    markdown = render_markdown(_review([TABLE], [_executed(*rows)]), budget=60_000)
    (line,) = [x for x in _table_lines(markdown) if x.startswith("| True | True |")]
    cells = [c.strip() for c in line.strip("|").split(" | ")]
    assert cells[:5] == ["True", "True", "keeps input", "True", "keeps input"]
    assert cells[5] == "—"  # nothing ran on the head
    assert cells[6] == f"**not built on the head: {why.replace('_', chr(92) + '_')}**"
    assert "the table was wrong here" not in markdown
    assert "3 of 4 rows as predicted" in markdown


def test_without_execution_the_predicted_table_is_shown_as_before() -> None:
    refused = _executed(harness=None, reason="`EngineConfig(...)` requires `model` (no default)")
    for executed in ([], [refused]):
        markdown = render_markdown(_review([TABLE], executed), budget=60_000)
        assert _table_lines(markdown) == [
            "| `cache` | `use_rope` | base | head | |",
            "| True | True | keeps input | keeps input |  |",
            "| True | False | keeps input | keeps input |  |",
            "| False | True | keeps input | False | **changed** |",
            "| False | False | keeps input | False |  |",
        ]
        assert f"`{TARGET}` @ `{PATH}:{LINE}`\n" in markdown
        assert "Truth tables run in the sandbox" not in markdown


def test_rows_are_matched_by_their_inputs_and_rows_not_run_say_so() -> None:
    """A shortened table keeps other rows than the executed table's positions name; a large table
    runs only its default and changed rows."""
    changed = TABLE.rows[2]
    executed = _executed(_as_predicted(2, changed))
    short = TruthTable(
        TARGET,
        TABLE.function,
        PATH,
        LINE,
        "python",
        TABLE.atoms,
        TABLE.variables,
        TABLE.input,
        (TABLE.rows[3], changed),
        4,
        True,
    )
    cells = executed_rows(ShownTable(short, executed))
    assert [(c.run, c.head) for c in cells] == [(False, ""), (True, "False")]
    markdown = render_markdown(_review([short], [executed]), budget=60_000)
    assert "| False | False | keeps input | _not run_ | False | _not run_ |  |" in _table_lines(markdown)


def _big() -> tuple[TruthTable, ExecutedTable]:
    """A 64-row table (six columns), every row run, with long values and a long generated test."""
    names = [f"args.enable_feature_number_{k}" for k in range(6)]
    variables = tuple(Variable(n, "bool", (True, False), default=False) for n in names)
    rows = []
    for i in range(64):
        inputs = {n: bool(i >> k & 1) for k, n in enumerate(names)}
        rows.append(
            Row(inputs, Outcome("const", "'" + "x" * 60 + "'"), Outcome("const", f"'{i:02}'"), True, i == 0)
        )
    table = TruthTable(
        "args.mode",
        "validate_args",
        "pkg/arguments.py",
        40,
        "python",
        tuple(names),
        variables,
        None,
        tuple(rows),
        64,
        False,
    )
    ran = tuple(
        ExecutedRow(
            i, r.inputs, True, r.default, r.head.text, r.base.text, _value(r.head.text), _value(r.base.text)
        )
        for i, r in enumerate(rows)
    )
    harness = HARNESS.__class__(**{**HARNESS.__dict__, "path": table.path, "target": table.target})
    executed = ExecutedTable(
        table.target,
        table.function,
        table.path,
        table.line,
        harness,
        rows=ran,
        defaults_head=_value("'00'"),
        test_code="# generated\n" * 2_000,
    )
    return table, executed


def test_a_big_executed_table_is_shortened_like_a_predicted_one() -> None:
    table, executed = _big()
    review = _review([table], [executed])
    review.findings = [
        f.__class__(**{**f.__dict__, "path": table.path, "line": table.line}) for f in review.findings
    ]
    markdown = render_markdown(review, budget=60_000)
    rows = _table_lines(markdown)[1:]
    assert (
        len(rows) == CAPS.table_rows and f"_{64 - CAPS.table_rows} more rows in the JSON report_" in markdown
    )
    # over the comment's budget the details go (the finding stays), and the note says so
    budget = len(markdown.encode()) // 2
    fitted = render_markdown(review, budget=budget)
    assert len(fitted.encode()) <= budget and "ran on head" not in fitted and "**F1 · [P2]" in fitted
    assert re.search(r"left out: the details of F1", fitted)
    assert "Truth tables run in the sandbox: 1; 64 of 64 rows" in _tests_section(fitted)


def test_the_stored_report_shortens_a_long_executed_table_and_drops_a_test_file_too_long_to_show() -> None:
    table, executed = _big()
    extra = tuple(
        ExecutedRow(64 + i, {"args.other": str(i)}, False, False, "1", "1", _value("1"), _value("1"))
        for i in range(40)
    )
    wrong = ExecutedRow(200, {"args.other": "-1"}, False, False, "1", "1", _value("2"), _value("1"))
    executed = executed.__class__(**{**executed.__dict__, "rows": (*extra, wrong, *executed.rows)})
    review = _review([table], [executed])
    render = Renderer(render_json, stored_json, lambda r: render_markdown(r, marker=""))
    whole = render(review)
    limit = len(whole[0].encode()) + len(whole[2].encode()) - 10_000
    fitted, (markdown, doc, text) = fit_report(review, render, limit)
    (short,) = doc["executed_tables"]
    assert len(short["rows"]) == 64 < len(executed.rows) and short["test"] == ""
    kept = [r["row"] for r in short["rows"]]
    # the wrong row, then the changed rows, in the table's order (the extra unchanged rows go)
    assert kept == [200, *range(63)]
    assert short["wrong_rows"] == [200] and short["verified"] == executed.verified
    assert len(markdown.encode()) + len(text.encode()) <= limit
    assert json.loads(text)["executed_tables"][0]["rows"] == short["rows"]
    assert fitted.notes[0].reason.value == "budget"
