"""Truth tables from derivation facts (pure): rows, outcomes, changed and default rows, the cap."""

from __future__ import annotations

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.tables.truthtable import OTHER, build_truth_tables
from reviewbot.lang.facts import Lang
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import Atom, Not, conj
from reviewbot.model.truthtable import Outcome, Row, TruthTable
from reviewbot.report.truth_tables import shown
from tests.execution.seedfacts import assign, seed_head, seed_index

INPUT = "attn_config.need_rope_kv_cache"
STYLE = "config.rope_config.style"


def _cells(table: TruthTable, r: Row) -> tuple[str, str]:
    """The row's base and head as the report shows them."""
    return shown(r.base, table.lang), shown(r.head, table.lang)


def _seed_table() -> TruthTable:
    derivations, head_facts = seed_head()
    tables = build_truth_tables(derivations, head_facts, seed_index())
    assert len(tables) == 1
    return tables[0]


def test_seed_table_changes_exactly_in_style_no_without_kv_cache_and_input_true() -> None:
    table = _seed_table()
    assert table.target == "config.need_rope_kv_cache"
    assert (table.path, table.line) == ("rtp_llm/cpp/config/ModelConfig.cc", 20)
    assert [v.name for v in table.variables] == [STYLE, "use_kvcache", INPUT]
    assert table.input == INPUT
    assert len(table.rows) == 8 and not table.truncated and table.changed_rows == 1
    changed = [r for r in table.rows if r.changed]
    assert [r.inputs for r in changed] == [{STYLE: "No", "use_kvcache": False, INPUT: True}]
    assert (changed[0].base, changed[0].head) == (Outcome("input", INPUT), Outcome("const", "False"))
    assert _cells(table, changed[0]) == ("keeps input", "false")


def test_seed_table_rows_cover_style_no_and_other_with_both_outcomes() -> None:
    table = _seed_table()
    rows = {(r.inputs[STYLE], r.inputs["use_kvcache"], r.inputs[INPUT]): _cells(table, r) for r in table.rows}
    assert set(rows) == {(s, k, i) for s in ("No", OTHER) for k in (True, False) for i in (True, False)}
    # The input already false: the new branch writes what was there, so the row does not change.
    assert rows[("No", False, False)] == ("keeps input", "false")
    assert rows[(OTHER, False, True)] == ("keeps input", "keeps input")


def test_seed_table_marks_the_default_row_from_struct_defaults() -> None:
    table = _seed_table()
    defaults = [r for r in table.rows if r.default]
    assert [r.inputs for r in defaults] == [{STYLE: "No", "use_kvcache": True, INPUT: True}]
    assert not defaults[0].changed
    sources = {v.name: v.default_from for v in table.variables}
    assert sources[STYLE] == "rtp_llm/cpp/config/RopeConfig.h:17"
    assert sources["use_kvcache"] == "rtp_llm/cpp/config/ModelConfig.h:12"


def test_enum_default_falls_back_to_first_member_and_bool_to_false() -> None:
    index = RepoIndex()
    index._enums["Mode"] = ("Fast", "Slow", "Off")
    guard = conj(Atom.comparison("cfg.mode", "==", "Mode::Slow"), Atom("cfg.enabled"))
    new = assign("cfg.flag", "True", 10, guard, branch_start=9, branch_end=11, guard_line=9)
    table = build_truth_tables([ChangedDerivation(new, (), True)], {}, index)[0]
    by_name = {v.name: v for v in table.variables}
    assert by_name["cfg.mode"].values == ("Slow", OTHER)
    assert by_name["cfg.mode"].default == OTHER  # Fast, the first member, is not compared
    assert by_name["cfg.enabled"].default is False
    # No write before the branch: the incoming value is the target itself.
    assert table.input == "cfg.flag"
    changed = [r.inputs for r in table.rows if r.changed]
    assert changed == [{"cfg.mode": "Slow", "cfg.enabled": True, "cfg.flag": False}]


def test_changed_guard_compares_base_and_head_branches() -> None:
    base_guard = Atom("cfg.a")
    head_guard = conj(Atom("cfg.a"), Not(Atom("cfg.b")))
    base = assign("cfg.x", "1", 5, base_guard, guard_line=4)
    head = assign("cfg.x", "1", 5, head_guard, guard_line=4)
    first = assign("cfg.x", "0", 3)
    head_facts = {"rtp_llm/cpp/config/ModelConfig.cc": _facts([first, head])}
    table = build_truth_tables([ChangedDerivation(head, (first, base), False)], head_facts, RepoIndex())[0]
    assert table.input is None  # a constant first write: nothing is kept from outside
    changed = [(r.inputs, r.base, r.head) for r in table.rows if r.changed]
    assert changed == [({"cfg.a": True, "cfg.b": True}, Outcome("const", "1"), Outcome("const", "0"))]


def test_python_table_shows_python_literals() -> None:
    guard = Atom.comparison("self.style", "!=", "RopeStyle.No")
    new = assign("self.flag", "False", 7, guard, lang=Lang.PYTHON, path="m.py", function="C.f")
    table = build_truth_tables([ChangedDerivation(new, (), True)], {}, RepoIndex())[0]
    heads = {r.inputs["style"]: _cells(table, r)[1] for r in table.rows if r.inputs["self.flag"] is True}
    assert heads == {"No": "keeps input", OTHER: "False"}


def test_more_than_the_cap_shows_only_changed_rows_and_says_so() -> None:
    atoms = [Atom(f"cfg.a{i}") for i in range(12)]
    new = assign("cfg.x", "False", 50, conj(*atoms[:2]), guard_line=49)
    # Ten more unrelated guarded writes of the same target widen the table beyond 2^10 rows.
    others = [assign("cfg.x", "cfg.y", 10 + i, atoms[i]) for i in range(2, 12)]
    table = build_truth_tables(
        [ChangedDerivation(new, tuple(others), True)],
        {"rtp_llm/cpp/config/ModelConfig.cc": _facts([*others, new])},
        RepoIndex(),
        max_rows=2**10,
    )[0]
    assert table.truncated and table.row_count > 2**10
    assert "exceed the cap" in table.note
    assert table.rows and all(r.changed for r in table.rows)
    assert all(r.inputs["cfg.a0"] and r.inputs["cfg.a1"] for r in table.rows)


def _facts(assigns: list) -> object:
    from reviewbot.lang.facts import FileFacts

    return FileFacts(path="rtp_llm/cpp/config/ModelConfig.cc", lang=Lang.CPP, assignments=tuple(assigns))


def test_guard_that_reads_the_target_itself_uses_the_input_column() -> None:
    # `if (!cfg.mode_set) cfg.mode_set = cfg.auto;` - a non-boolean write under a guard on the target.
    new = assign("cfg.mode_set", "cfg.auto", 8, Not(Atom("cfg.mode_set")), guard_line=7)
    table = build_truth_tables([ChangedDerivation(new, (), True)], {}, RepoIndex())[0]
    assert table.input == "cfg.mode_set"
    assert [v.name for v in table.variables] == ["cfg.mode_set"]
    rows = {r.inputs["cfg.mode_set"]: (*_cells(table, r), r.changed) for r in table.rows}
    assert rows == {True: ("keeps input", "keeps input", False), False: ("keeps input", "cfg.auto", True)}
