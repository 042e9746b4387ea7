"""What the rules say: suggestions and the rows a test must pin are valid for the language and the predicate at hand,
titles and evidence stay short, counts match the lists they announce, and the test verdict decides."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.checks import missing_tests
from reviewbot.checks.duplicated_predicate import name_for, same_predicate
from reviewbot.checks.pinning import pin_table
from reviewbot.checks.util import MAX_EVIDENCE, MAX_TITLE
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.parse import parse_file
from reviewbot.model.change import ChangeSet, Note
from reviewbot.model.finding import Finding
from reviewbot.model.tests import ExecutionResults, Mutant, MutantResult, TestRun
from reviewbot.review.pipeline import ReviewSettings
from tests.checks.fixtures import FIXTURES, review_case

MINE = (
    "missing-tests",
    "unconditional-override",
    "flag-overloading",
    "duplicated-predicate",
    "formatting-noise",
)
_IDENT = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


def test_duplicated_predicate_names_the_local_in_the_files_language(tmp_path: Path) -> None:
    py = review_case(FIXTURES / "duplicated-predicate" / "py-same-function", tmp_path / "py")
    (finding,) = [f for f in py if f.rule == "duplicated-predicate"]
    assert "const bool" not in finding.suggestion
    assert "`no_kvcache_and_rope_style_is_no = not cfg.use_kvcache and " in finding.suggestion

    cpp = review_case(FIXTURES / "duplicated-predicate" / "cpp-same-function", tmp_path / "cpp")
    (finding,) = [f for f in cpp if f.rule == "duplicated-predicate"]
    assert "`const bool no_kvcache_and_rope_style_is_no = !use_kvcache && " in finding.suggestion


def test_duplicated_predicate_on_other_receivers_names_the_meaning(tmp_path: Path) -> None:
    found = review_case(FIXTURES / "duplicated-predicate" / "cpp-different-operands", tmp_path / "cpp")
    (finding,) = [f for f in found if f.rule == "duplicated-predicate"]
    assert "`const bool rope_style_is_no_and_qk_norm = params.rope_config.style" in finding.suggestion


def _pred(text: str, lang: str = "py") -> Any:
    src = (
        f"def f(a, b, cfg):\n    if {text}:\n        pass\n"
        if lang == "py"
        else f"void f() {{\n  if ({text}) {{}}\n}}\n"
    )
    facts = parse_file(f"a.{'py' if lang == 'py' else 'cc'}", src)
    assert facts is not None
    (use,) = facts.predicates
    return use.pred


@pytest.mark.parametrize(
    ("written", "lang"),
    [
        ("!a.items.empty() && b.value.has_value()", "cc"),
        ("not a.items.empty() and b.has_value()", "py"),
        ("cfg.x is not None and cfg.n > 8", "py"),
        ("cfg.mode in ('a', 'b') and not cfg.use_mla", "py"),
        ("cfg.name == 'model a' or cfg.kind != Kind.B", "py"),
        ("config.rope_config.style == RopeStyle::No && !use_kvcache", "cc"),
        ("!__builtin_expect(x__y, 0) && _private_", "cc"),
    ],
)
def test_local_names_are_identifiers_built_from_the_meaning(written: str, lang: str) -> None:
    name = name_for(_pred(written, lang), written)
    assert _IDENT.fullmatch(name), name
    assert "__" not in name and len(name) <= 48


def test_predicates_on_different_operands_are_different() -> None:
    a = _pred("!req.tokens.empty() && res.value.has_value()", "cc")
    b = _pred("!a.items.empty() && b.value.has_value()", "cc")
    assert not same_predicate(a, b)
    # The same fields through differently named config receivers, across languages, are the same.
    c = _pred("config.rope_config.style == RopeStyle::No && !use_kvcache", "cc")
    d = _pred("not cfg.use_kvcache and cfg.rope_config.style == RopeStyle.No", "py")
    assert same_predicate(c, d)
    e = _pred("self.attn_config.rope_config.style == RopeStyle.No and not self.use_kvcache", "py")
    assert same_predicate(c, e)
    assert not same_predicate(c, _pred("quant_config.style == RopeStyle::No && !use_kvcache", "cc"))


# --- the rows a focused test must pin -------------------------------------------------------------

_CPP_HEADER = "enum class RopeStyle { No = 0, Base = 1 };\nstruct AttentionConfigs { bool need_rope_kv_cache = true; };\n"
_DERIVATIONS = [
    (
        "cc",
        "if (config.rope_config.style == RopeStyle::No && !use_kvcache) { config.need_rope_kv_cache = false; }",
    ),
    ("cc", "if (cfg.dtype != nullptr && cfg.n >= 4) { cfg.scale = 0.5; }"),
    ("cc", 'if (params.mode == Mode::Fast || !params.ok) { params.path = "x y"; }'),
    ("py", "if cfg.x is not None and not cfg.dtype:\n        cfg.quant = None"),
    ("py", "if cfg.style != Style.NO and cfg.n < 3:\n        cfg.name = 'a \"b\"'"),
    ("py", "if cfg.mode in ('a', 'b') and cfg.items.empty():\n        cfg.dtype = torch.float32"),
    ("py", "if LIMIT < cfg.seq_len:\n        cfg.seq_len = cfg.seq_len // tp_size"),
    ("py", "cfg.in_ = os.environ.get('X', '1') == '1'"),
]


def _derivation(lang: str, body: str) -> tuple[ChangedDerivation, RepoIndex]:
    if lang == "cc":
        src = (
            _CPP_HEADER
            + "void Model::derive(Cfg& config, Cfg& cfg, Cfg& params) const {\n    "
            + body
            + "\n}\n"
        )
    else:
        src = "class Style:\n    NO = 0\n\n\ndef derive(cfg):\n    " + body + "\n"
    facts = parse_file(f"d.{lang}", src)
    assert facts is not None and facts.assignments, src
    index = RepoIndex()
    index.add(facts)
    return ChangedDerivation(head=facts.assignments[-1], base=(), new_branch=True), index


_GARBAGE = re.compile(r"<(?:not|None|[A-Z]\w* other)|\(<|<\w+ other than")


@pytest.mark.parametrize(("lang", "body"), _DERIVATIONS)
def test_rows_to_pin_have_a_value_per_column_and_no_garbage(lang: str, body: str) -> None:
    d, index = _derivation(lang, body)
    table = pin_table(d, index)
    assert table.rows and all(len(r.inputs) == len(table.columns) for r in table.rows)
    for row in table.rows:
        for v in (*row.inputs, row.expected):
            assert not _GARBAGE.search(v.text), v
            assert v.kind != "placeholder" or v.note, v  # a placeholder says what it stands for
    # The sentence form (missing-tests' prose rows) agrees with the table.
    cols, rows = missing_tests.rows_to_pin(d, index)
    assert len(cols) == len(table.columns) and len(rows) == len(table.rows)


def test_rows_name_enum_alternatives_from_the_index() -> None:
    d, index = _derivation("cc", _DERIVATIONS[0][1])
    table = pin_table(d, index)
    texts = [[v.text for v in r.inputs] for r in table.rows]
    assert any("RopeStyle::Base" in t or "RopeStyle.Base" in t for row in texts for t in row)
    assert [c.label for c in table.columns][0].endswith(
        "style"
    )  # the columns follow the condition as written


# --- missing-tests: the executed tests decide -------------------------------------------------------


@dataclass
class _Executed:
    """What the test stage hands back: every mutant with the given verdict."""

    status: str
    summary: dict[str, Any] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    derivations: list[ChangedDerivation] = field(default_factory=list)

    def results(self) -> ExecutionResults:
        head = TestRun("head", 0, False, 1.0)
        mutants = tuple(
            MutantResult(
                Mutant(
                    f"m{i}",
                    d.head.path,
                    d.head.line,
                    "drop-branch",
                    "branch dropped",
                    ((d.head.path, d.head.line),),
                    "",
                ),
                self.status,
                ("tests/test_x.py::test_row",) if self.status == "killed" else (),
            )
            for i, d in enumerate(self.derivations, 1)
        )
        return ExecutionResults(True, "pytest", "bwrap", head, mutants)


def _executed(status: str) -> ReviewSettings:
    def execute(change: ChangeSet, derivations: list[ChangedDerivation]) -> _Executed:
        return _Executed(status, derivations=derivations)

    return ReviewSettings(execute=execute)


def test_a_killed_mutant_pins_the_branch_whatever_the_tests_mention(tmp_path: Path) -> None:
    case = FIXTURES / "missing-tests" / "cpp-unchanged-test"
    assert [f.rule for f in review_case(case, tmp_path / "a")].count("missing-tests") == 1
    found = review_case(case, tmp_path / "b", _executed("killed"))
    assert [f for f in found if f.rule == "missing-tests"] == []


def test_a_surviving_mutant_is_a_missing_test_even_with_a_new_test(tmp_path: Path) -> None:
    case = FIXTURES / "missing-tests" / "cpp-test-added"
    assert [f for f in review_case(case, tmp_path / "a") if f.rule == "missing-tests"] == []
    (finding,) = [
        f for f in review_case(case, tmp_path / "b", _executed("survived")) if f.rule == "missing-tests"
    ]
    assert "mutant m1" in finding.evidence[0] and "survives" in finding.evidence[0]
    # Nothing in the fixture declares the guard's defaults or sets its fields: only who opts in reaches
    # the row (a P3 note: proof that nothing pins it does not make an opt-in blocking); the
    # population is the evidence's second line.
    assert finding.severity.value == "P3" and "opt-in" in finding.evidence[1]


# --- shape of every finding of these rules on their fixtures -----------------------------------------


def _all_findings(tmp_path: Path) -> list[Finding]:
    out: list[Finding] = []
    for rule in MINE:
        for case in sorted(p for p in (FIXTURES / rule).iterdir() if (p / "head").is_dir()):
            out += [f for f in review_case(case, tmp_path / rule / case.name) if f.rule in MINE]
    return out


def test_titles_are_short_and_evidence_is_three_lines(tmp_path: Path) -> None:
    findings = _all_findings(tmp_path)
    assert {f.rule for f in findings} == set(MINE)
    for f in findings:
        assert len(f.title) <= MAX_TITLE, f.title
        assert 1 <= len(f.evidence) <= MAX_EVIDENCE, (f.rule, f.evidence)
        if f.rule == "flag-overloading":
            # "gates N different behaviours (`a`, `b` and K more)": N is what the list names.
            m = re.search(r"gates (\d+) different behaviours \(([^)]*)\)", f.title)
            assert m, f.title
            listed = m.group(2).count("`") // 2
            more = re.search(r"and (\d+) more", m.group(2))
            assert int(m.group(1)) == listed + (int(more.group(1)) if more else 0), f.title
