"""Mutants that revert a changed derivation branch: what text they produce."""

from __future__ import annotations

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.example import EXAMPLE_DIR
from reviewbot.execution.mutants import build_mutants
from reviewbot.lang.facts import AssignKind, Lang
from reviewbot.lang.predicate import Atom, Not
from reviewbot.model.change import ChangedFile, ChangeSet, FileStatus, Hunk
from tests.execution.seedfacts import CC, assign, seed_head


def _change(path: str, base: str, head: str, added: dict[int, str]) -> ChangeSet:
    hunk = Hunk(1, 1, 1, 1, "@@", tuple(sorted(added.items())), ())
    f = ChangedFile(path, path, FileStatus.MODIFIED, (hunk,), base, head)
    return ChangeSet("b" * 40, "h" * 40, "b" * 40, [f], patch_bytes=0)


def _seed_change() -> ChangeSet:
    base = (EXAMPLE_DIR / "base" / CC).read_text()
    head = (EXAMPLE_DIR / "round1" / CC).read_text()
    lines = head.split("\n")
    return _change(CC, base, head, {n: lines[n - 1] for n in range(18, 23)})


def test_seed_mutant_drops_the_new_write_and_keeps_the_if() -> None:
    derivations, _ = seed_head()
    (m,) = build_mutants(_seed_change(), derivations)
    assert (m.path, m.line, m.kind, m.problem) == (CC, 20, "drop-branch", "")
    assert m.covers == ((CC, 21),)
    lines = m.text.split("\n")
    head_lines = (EXAMPLE_DIR / "round1" / CC).read_text().split("\n")
    assert len(lines) == len(head_lines)
    assert lines[20] == "        ;"  # line 21: the write is gone, the braces of the `if` stay
    assert [n for n, (x, y) in enumerate(zip(lines, head_lines, strict=True), 1) if x != y] == [21]
    assert "the body of the new branch" in m.description and "need_rope_kv_cache = false" in m.description


def test_python_one_line_if_keeps_the_condition_and_parses() -> None:
    head = "def f(cfg):\n    if cfg.a: cfg.x = compute(1,\n        2)\n    return cfg\n"
    a = assign(
        "cfg.x",
        "compute(1,2)",
        2,
        Atom("cfg.a"),
        lang=Lang.PYTHON,
        path="m.py",
        function="f",
        guard_line=2,
        branch_start=2,
        branch_end=3,
    )
    (m,) = build_mutants(_change("m.py", "", head, {2: "", 3: ""}), [ChangedDerivation(a, (), True)])
    assert m.problem == ""
    assert m.text.split("\n")[1:3] == ["    if cfg.a: pass", ""]


def test_changed_value_restores_the_base_statement() -> None:
    base = "void f() {\n  if (c) {\n    cfg.x = 1;\n  }\n}\n"
    head = "void f() {\n  if (c) {\n    cfg.x = 2;\n  }\n}\n"
    b = assign("cfg.x", "1", 3, Atom("c"), path="f.cc", function="f", guard_line=2, text="cfg.x = 1;")
    h = assign("cfg.x", "2", 3, Atom("c"), path="f.cc", function="f", guard_line=2)
    (m,) = build_mutants(
        _change("f.cc", base, head, {3: "    cfg.x = 2;"}), [ChangedDerivation(h, (b,), False)]
    )
    assert m.kind == "restore-value" and m.text == base


def test_changed_guard_restores_the_base_condition_only() -> None:
    base = "void f() {\n  if (a) {\n    cfg.x = 1;\n    g();\n  }\n}\n"
    head = "void f() {\n  if (a &&\n      !b) {\n    cfg.x = 1;\n    h();\n  }\n}\n"
    b = assign("cfg.x", "1", 3, Atom("a"), path="f.cc", function="f", guard_line=2, guard_text="a")
    h = assign("cfg.x", "1", 4, Atom("a"), path="f.cc", function="f", guard_line=2)
    h = h.__class__(**{**h.__dict__, "guard": Not(Atom("b"))})
    (m,) = build_mutants(_change("f.cc", base, head, {2: "", 3: ""}), [ChangedDerivation(h, (b,), True)])
    assert m.kind == "restore-guard"
    assert m.text == "void f() {\n  if (a) {\n    cfg.x = 1;\n    h();\n  }\n}\n"


def test_both_arms_of_a_new_ternary_make_one_mutant() -> None:
    head = "void f() {\n  cfg.x = c ? false\n            : true;\n  other();\n}\n"
    arms = [
        assign("cfg.x", v, 2, g, kind=AssignKind.TERNARY, path="f.cc", function="f")
        for v, g in (("False", Atom("c")), ("True", Not(Atom("c"))))
    ]
    (m,) = build_mutants(
        _change("f.cc", "", head, {2: "", 3: ""}), [ChangedDerivation(x, (), True) for x in arms]
    )
    assert m.text == "void f() {\n  ;\n\n  other();\n}\n"
