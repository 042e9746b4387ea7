"""guard-removed: statements with their guards (lang.clauses), base-vs-head lines, and the findings'
severity and evidence on the fixture cases (the reported lines are held by test_fixtures)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.analysis.sides import head_line
from reviewbot.change.diff import load_change
from reviewbot.lang.clauses import ClauseKind, OptionKind, atoms, clauses
from reviewbot.model.change import Hunk
from reviewbot.model.finding import Finding, Severity
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.checks.fixtures import FIXTURES, build_case, review_case

RULE = "guard-removed"


NOTES = "validation-removed"  # the P3 tier, an opt-in rule (review_case turns the opt-in rules on)


def _case(case: str) -> Path:
    """The fixture of either rule: the notes' cases live under validation-removed."""
    return FIXTURES / RULE / case if (FIXTURES / RULE / case).is_dir() else FIXTURES / NOTES / case


def _findings(case: str, tmp_path: Path, rule: str = RULE) -> list[Finding]:
    return [f for f in review_case(_case(case), tmp_path / "repo") if f.rule == rule]


def test_python_statements_carry_their_conditions_outermost_first() -> None:
    src = (
        "import os\n"
        "def f(cfg):\n"
        "    if cfg.a and cfg.b:\n"
        "        cfg.x = 1\n"
        "    elif cfg.c:\n"
        "        raise ValueError('c')\n"
        "    else:\n"
        "        os.environ['NEW'] = os.environ.get('OLD')\n"
        "    assert cfg.d > 0\n"
    )
    by_line = {c.line: c for c in clauses("a.py", src).clauses}
    assert [g.text for g in by_line[4].guards] == ["cfg.a and cfg.b"]
    assert set(by_line[4].guard_atoms) == {"cfg.a", "cfg.b"}
    assert by_line[6].kind is ClauseKind.RAISE
    assert [(g.text, g.negated) for g in by_line[6].guards] == [("cfg.a and cfg.b", True), ("cfg.c", False)]
    write = by_line[8]
    assert write.kind is ClauseKind.ENV_WRITE and write.env_name == "NEW" and write.env_sources == ("OLD",)
    assert [g.negated for g in write.guards] == [True, True]
    assert by_line[9].kind is ClauseKind.CHECK and by_line[9].function == "f"


def test_cpp_else_if_chains_and_check_macros() -> None:
    src = (
        "void Config::init() {\n"
        "    if (a && !b) {\n"
        "        x = 1;\n"
        "    } else if (c) {\n"
        '        throw std::runtime_error("c");\n'
        "    }\n"
        "    FT_CHECK(tp_size > 0);\n"
        '    setenv("NEW", getenv("OLD"), 1);\n'
        "}\n"
    )
    by_line = {c.line: c for c in clauses("a.cc", src).clauses}
    assert by_line[3].guard_atoms == frozenset({"a", "!b"}) and by_line[3].function == "Config::init"
    assert by_line[5].kind is ClauseKind.RAISE
    assert [(g.text, g.negated) for g in by_line[5].guards] == [("a&&!b", True), ("c", False)]
    assert by_line[7].kind is ClauseKind.CHECK
    assert by_line[8].kind is ClauseKind.ENV_WRITE and by_line[8].env_sources == ("OLD",)


def test_a_negated_guard_is_one_atom_and_a_conjunction_splits_at_the_top_only() -> None:
    python = clauses("b.py", "def f(x):\n    if g(a and b) and c:\n        y = 1\n").clauses[0]
    assert atoms(python.guards[0]) == ("g(a and b)", "c")


def test_option_defaults_of_arguments_and_parameters() -> None:
    src = (
        "def build_config(use_x: bool = False, n=3):\n"
        "    parser.add_argument('--max-len', type=int, default=4096)\n"
        "    parser.add_argument('-p', '--port', dest='server_port', default=80)\n"
    )
    options = {(o.kind, o.name): o.default for o in clauses("c.py", src).options}
    assert options[(OptionKind.PARAMETER, "use_x")] == "False"
    assert options[(OptionKind.ARGUMENT, "max_len")] == "4096"
    assert options[(OptionKind.ARGUMENT, "server_port")] == "80"
    cpp = clauses("d.h", "struct A { void f(bool fast = false); };\n").options
    assert [(o.name, o.default, o.function) for o in cpp] == [("fast", "False", "A::f")]


def test_a_removed_line_sits_where_the_next_kept_line_is_in_the_head() -> None:
    # base 10-12 -> head 10: lines 10 and 11 removed, 12 kept; a later hunk adds two lines.
    hunks = [
        Hunk(9, 4, 9, 2, "", added=(), removed=((10, "a"), (11, "b"))),
        Hunk(30, 1, 28, 3, "", added=((28, "x"), (29, "y")), removed=()),
    ]
    assert head_line(hunks, 10) == 10
    assert head_line(hunks, 11) == 10
    assert head_line(hunks, 12) == 10
    assert head_line(hunks, 20) == 18
    assert head_line(hunks, 40) == 40


def test_a_dropped_guard_in_every_models_constructor_is_p0(tmp_path: Path) -> None:
    (f,) = _findings("py-dropped-guard", tmp_path)
    assert f.severity is Severity.P0
    assert f.title.startswith('`os.environ["REUSE_CACHE"] = os.environ.get(')
    assert "is not None" in f.title and "GPT.__init__" in f.title
    assert f.evidence[0].startswith("Deleted at base models/gpt.py:7: `if os.environ.get")
    assert "`REUSE_CACHE`" in f.evidence[1] and "none mention" in f.evidence[1]
    assert "3 subclasses" in f.evidence[2] and "`Qwen`" in f.evidence[2]
    zh = f.localized("zh")
    assert zh.title != f.title and "USE_BLOCK_CACHE" in zh.title and "GPT.__init__" in zh.title


def test_a_removed_rule_for_one_model_is_reported_where_it_was_and_says_no_test_changed(
    tmp_path: Path,
) -> None:
    f, dropped = sorted(_findings("py-derivation-removed", tmp_path), key=lambda x: x.path)
    assert f.severity is Severity.P1 and f.path == "config/builder.py"
    # a guard dropped in a model's config builder: every size of that model takes the rule (P1)
    assert dropped.severity is Severity.P1 and dropped.path == "models/baichuan.py"
    assert "without its guard `config.layer_num == 40`" in dropped.title
    assert "`config.use_logn_attn`" in f.title and "`create_config`" in f.title
    assert f.evidence[0] == (
        'Deleted at base config/builder.py:5: `if model_type == "qwen": ⏎ config.use_logn_attn = True`.'
    )
    assert f.evidence[1] == "Tests changed in this PR: none mention `use_logn_attn`."


def test_a_narrowed_cpp_guard_names_only_the_condition_it_lost_and_does_not_block(tmp_path: Path) -> None:
    # A note for the author under the opt-in validation-removed, not a merge blocker; guard-removed is silent.
    assert _findings("cpp-guard-dropped", tmp_path / "rule") == []
    (f,) = _findings("cpp-guard-dropped", tmp_path, NOTES)
    assert "`config.need_rope_kv_cache = false`" in f.title and "`!use_kvcache`" in f.title
    assert f.severity is Severity.P3 and not f.blocking


def test_a_removed_validation_is_a_note(tmp_path: Path) -> None:
    # A removed raise only lets configurations through that were rejected before, most often on purpose:
    # a P3 note, never blocking.
    found = _findings("cpp-validation-removed", tmp_path, NOTES)
    validations = [f for f in found if dict(f.extra).get("kind") == "validation"]
    assert validations and all(f.severity is Severity.P3 and not f.blocking for f in validations)
    assert _findings("cpp-validation-removed", tmp_path / "rule") == []  # not guard-removed's own


def test_the_notes_are_off_unless_a_repository_enables_them(tmp_path: Path) -> None:
    # Default settings: the opt-in rule does not run, so the removed validation is not reported at all.
    repo, base, head = build_case(_case("cpp-validation-removed"), tmp_path / "repo")
    found = review_change(load_change(repo.path, base, head), ReviewSettings()).findings
    assert not [f for f in found if f.rule in (RULE, NOTES)]


def test_a_removed_runtime_write_outside_config_code_is_not_reported(tmp_path: Path) -> None:
    # The same removal as a config derivation's, but of a scheduler's state in scheduler code: not a
    # setting, so nothing to report; the same dropped guard in config code is still reported.
    assert _findings("cpp-runtime-guard-dropped", tmp_path) == []
    assert _findings("cpp-runtime-guard-dropped", tmp_path / "notes", NOTES) == []
    [kept] = _findings("cpp-guard-dropped", tmp_path / "config", NOTES)
    assert kept.severity is Severity.P3  # `ModelConfig::getAttentionConfigs`: config code, still noted


def test_a_derivation_deleted_outside_a_model_builder_is_not_reported(tmp_path: Path) -> None:
    # The same kind of removal as py-derivation-removed, but from a plain method: most such deletions are
    # the clean-up the change is about (as P3 questions, all 20 train findings were wrong). From a
    # model's config builder it is still reported.
    assert _findings("py-derivation-cleanup", tmp_path) == []
    assert _findings("py-derivation-removed", tmp_path / "builder") != []
