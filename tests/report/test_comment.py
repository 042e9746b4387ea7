"""The summary comment: the shape of a finding, references by number, the size budget and the hard limit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reviewbot.example import ExampleRepo, build_example
from reviewbot.model.change import Note, SkipReason
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import ChecklistItemResult, ChecklistResult, Review, RoundInfo, Status
from reviewbot.model.round import RoundRow
from reviewbot.model.truthtable import Outcome, Row, TruthTable, Variable
from reviewbot.report import templating
from reviewbot.report.comment import BUDGET, CAPS, GITHUB_LIMIT, render_finding, render_markdown
from reviewbot.report.marker import MARKER_LIMIT, MarkedFinding, State, decode_state, encode_state
from reviewbot.report.templating import cache_templates
from reviewbot.runner import run_local_round

SKETCH = "import pytest\n\n\ndef test_pins_the_row():\n    assert derive(False) is False\n"
KEEPS, FALSE = Outcome("input", "config.flag"), Outcome("const", "False")
TABLE = TruthTable(
    target="config.flag",
    function="Config::derive",
    path="src/config.cc",
    line=10,
    lang="cpp",
    atoms=("use_cache",),
    variables=(Variable("use_cache", "bool", (True, False), default=True),),
    input=None,
    rows=(
        Row({"use_cache": True}, KEEPS, KEEPS, changed=False, default=True),
        Row({"use_cache": False}, KEEPS, FALSE, changed=True, default=False),
    ),
    row_count=2,
    truncated=False,
)


def _finding(i: int, severity: Severity = Severity.P2, **kw: object) -> Finding:
    fields: dict[str, object] = {
        "rule": "unconditional-override",
        "severity": severity,
        "path": "src/config.cc",
        "line": 10 + i,
        "title": f"`config.flag_{i} = false` overrides the explicit setting {i}",
        "anchor": f"config.flag_{i} = false;",
        "evidence": tuple(f"writer: src/models/m{i}_{k}.py:{k + 1} `cfg.flag_{i} = True`" for k in range(6)),
        "suggestion": f"Derive `flag_{i}` only while it is still at its default.",
    }
    fields.update(kw)
    return Finding(**fields)  # type: ignore[arg-type]


def _review(findings: list[Finding], **kw: object) -> Review:
    review = Review(
        status=Status.BLOCKING if any(f.blocking for f in findings) else Status.LGTM,
        base_sha="b" * 40,
        head_sha="c" * 40,
        merge_base="b" * 40,
        reviewed_at="2026-01-01 00:00 UTC",
        findings=findings,
        checklist=ChecklistResult(),
        strengths=["The change is confined to one function (`derive`)."],
        notes=[],
        kpi={"coverage": 1.0, "timings_ms": {"parse": 1.5}},
    )
    for k, v in kw.items():
        setattr(review, k, v)
    return review


def _with_marker(review: Review, **kw: int) -> str:
    return render_markdown(review, "en", marker=encode_state(State.from_review(review)), **kw)


def _sections(markdown: str) -> dict[str, str]:
    parts = re.split(r"^### ", markdown, flags=re.MULTILINE)
    return {p.split("\n", 1)[0]: p for p in parts[1:]}


def test_a_finding_is_a_short_title_three_evidence_lines_a_suggestion_and_the_rest_folded() -> None:
    long_title = "`config.flag = false` " + "overrides every explicit setting of the flag " * 8
    f = _finding(0, Severity.P1, title=long_title, suggestion_code=SKETCH, suggestion_lang="python")
    body = render_finding(f)
    title, rest = body.split("\n", 1)
    assert title.startswith("**[P1] `config.flag = false` overrides") and title.endswith("…**")
    assert len(title) <= CAPS.title + len("**[P1] **") + 10  # (escaping adds a little)
    shown, details = rest.split("<details>", 1)
    assert re.findall(r"^- writer: ", shown, re.MULTILINE) == ["- writer: "] * 3
    assert "Suggestion: Derive `flag_0` only while it is still at its default." in shown
    assert re.findall(r"^- writer: ", details, re.MULTILINE) == ["- writer: "] * 3
    assert "```python\nimport pytest\n" in details and details.rstrip().endswith("</details>")


def test_the_truth_table_folds_into_the_finding_on_its_derivation() -> None:
    markdown = render_markdown(_review([_finding(0, Severity.P1, line=10)], truth_tables=[TABLE]))
    finding = _sections(markdown)["Blocking Issues"]
    details = finding.split("<details>", 1)[1]
    assert "| `use_cache` | base | head | |" in details and "**changed**" in details
    assert "| False | keeps input | false | **changed** |" in details  # C++ spells its booleans
    assert "Truth tables" not in markdown  # not repeated on its own


def test_the_checklist_names_findings_by_number_never_by_title() -> None:
    findings = [_finding(0, Severity.P1), _finding(1), _finding(2, Severity.P3)]
    items = [
        ChecklistItemResult(
            "t", "General", "[6.1] Tests — new logic has a test", True, (findings[0].fingerprint,)
        ),
        ChecklistItemResult(
            "d", "General", "[6.1] DRY", True, (findings[1].fingerprint, findings[2].fingerprint)
        ),
        ChecklistItemResult("s", "General", "[6.1] Security", False),
    ]
    markdown = render_markdown(_review(findings, checklist=ChecklistResult(items)))
    checklist = _sections(markdown)["Checklist Findings (2 fail / 3 total)"]
    # A ticked box is an item that holds; a failed one is open, with its findings.
    assert "- [ ] [6.1] Tests — new logic has a test → F1" in checklist
    assert "- [ ] [6.1] DRY → F2, F3" in checklist and "- [x] [6.1] Security" in checklist
    assert all(f.title not in checklist and f"flag_{i}" not in checklist for i, f in enumerate(findings))
    assert "**F1 · [P1] " in markdown and "**F2 · [P2] " in markdown and "**F3 · [P3] " in markdown


def test_many_findings_fit_the_budget_details_go_first_then_lower_severity_bodies() -> None:
    findings = [_finding(i, Severity.P1, suggestion_code=SKETCH) for i in range(2)]
    findings += [_finding(i, Severity.P2 if i < 20 else Severity.P3) for i in range(2, 40)]
    markdown = _with_marker(_review(findings))
    assert len(markdown.encode()) <= BUDGET
    assert "<details>" not in markdown.split("### Checklist")[0]  # no finding keeps details ...
    shown = [n for n in range(1, 41) if re.search(rf"\*\*F{n} · .*\n\n- writer: ", markdown)]
    assert shown == list(range(1, shown[-1] + 1)) and shown[-1] >= 20  # ... while bodies go from the end
    blocking = _sections(markdown)["Blocking Issues"]
    assert blocking.count("- writer: ") == 6 and blocking.count("Suggestion: ") == 2
    note = markdown.split("\n")[2]
    assert note.startswith("_Shortened to stay within 12 KB; left out: the details of F1–F")
    # 20 P3s: the comment shows CAPS.p3 of them (F21-F30) and says how many it did not.
    assert f"all but the titles of F{shown[-1] + 1}–F{20 + CAPS.p3}" in note
    # A PR author reads the comment: it names no command to run (issue 27).
    assert note.endswith("The JSON report has everything._") and "reviewbot run" not in note
    assert f"**F{20 + CAPS.p3} · [P3] " in markdown  # every shown finding keeps its title line
    assert f"**F{21 + CAPS.p3} · " not in markdown
    assert f"_Folded: {20 - CAPS.p3} more P3 findings not shown (at most {CAPS.p3} are). " in markdown
    state = decode_state(markdown)
    assert state is not None and len(state.findings) == 40
    assert markdown.rstrip("\n").splitlines()[-1] == encode_state(State.from_review(_review(findings)))


def test_what_still_fits_comes_back_most_important_first() -> None:
    findings = [_finding(0, Severity.P1, suggestion_code=SKETCH, suggestion_lang="python")]
    # P2s: the comment shows at most CAPS.p3 P3s, and these are about the budget.
    findings += [_finding(i, Severity.P2, evidence=("e" * 290,) * 3) for i in range(1, 30)]
    markdown = _with_marker(_review(findings))
    assert len(markdown.encode()) <= BUDGET
    # Dropping the P3 bodies made room again for the P1's folded test sketch.
    assert "```python\nimport pytest" in _sections(markdown)["Blocking Issues"]


def test_when_the_titles_alone_exceed_the_budget_the_most_important_bodies_still_show() -> None:
    findings = [_finding(i, Severity.P1 if i < 10 else Severity.P2) for i in range(150)]  # P2: no P3 cap
    markdown = _with_marker(_review(findings))
    assert BUDGET < len(markdown.encode()) <= GITHUB_LIMIT
    assert all(f"**F{n} · " in markdown for n in range(1, 151))  # every title
    assert "- writer: src/models/m0_0.py:1" in markdown  # and the first bodies, half a budget of them
    assert "- writer: src/models/m149_0.py:1" not in markdown
    assert re.match(r"_Shortened to stay within \d+(\.\d)? KB; ", markdown.split("\n")[2])


def test_nothing_is_left_out_when_the_report_fits() -> None:
    markdown = _with_marker(_review([_finding(0, Severity.P1, suggestion_code=SKETCH)]))
    assert "Shortened" not in markdown and "<details>" in markdown and '"coverage": 1.0' in markdown
    assert "timings_ms" not in markdown  # the comment is the same on every run of one head


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_whatever_comes_in_the_comment_stays_under_githubs_limit_with_its_marker(lang: str) -> None:
    huge = "x" * 5000
    findings = [
        _finding(i, Severity(f"P{i % 4}"), title=f"`{huge}` {i}", evidence=(huge,) * 30, suggestion=huge)
        for i in range(3000)
    ]
    notes = [Note(SkipReason.UNAVAILABLE, f"note {i} {huge}") for i in range(50)]
    fixed = [_finding(i, state="fixed", fixed_in="d" * 40) for i in range(100)]
    review = _review(findings, notes=notes, round=RoundInfo(pr=7, fixed=fixed), strengths=[huge] * 50)
    marker = encode_state(State.from_review(review))
    assert len(marker) <= MARKER_LIMIT
    markdown = render_markdown(review, lang, marker=marker)
    assert len(markdown) <= GITHUB_LIMIT
    assert markdown.rstrip("\n").splitlines()[-1] == marker and decode_state(markdown) is not None
    assert "PR #7" in markdown.split("\n")[0] and "P0/750 · P1/750 · P2/750 · P3/750" in markdown
    note = markdown.split("\n")[2]
    assert ("findings (F" in note or "条发现（F" in note) and "\n" not in note
    assert "**F1 · [P0] " in markdown  # the most severe stay, as titles at least
    assert sum(1 for line in markdown.splitlines() if line.startswith("```")) % 2 == 0


def test_an_inline_comment_for_a_huge_finding_stays_under_the_limit() -> None:
    huge = "y" * 100_000
    f = _finding(0, title=huge, evidence=(huge,) * 100, suggestion=huge, suggestion_code=huge)
    body = render_finding(f)
    assert len(body) < 20_000 and "The test sketch (1 lines) is in the JSON report." in body


def test_a_huge_state_gives_way_least_severe_first_and_never_exceeds_its_limit() -> None:
    findings = tuple(
        MarkedFinding(
            f"{i:016x}", "new" if i % 3 else "fixed", "unconditional-override", f"P{i % 4}",
            f"src/module_{i}/config.cc", i, f"config.flag_{i} = style == No && !use_kvcache; // {i * 7919}",
            f"`config.flag_{i}` is overridden {i}" * 4,
        )
        for i in range(6000)
    )  # fmt: skip
    state = State(
        1, "a" * 40, "b" * 40, findings, history=tuple(RoundRow(r, "c" * 40, "LGTM") for r in range(1, 60))
    )
    marker = encode_state(state)
    decoded = decode_state(marker)
    assert len(marker) <= MARKER_LIMIT and decoded is not None
    assert len(decoded.history) == 20 and decoded.history[-1] == RoundRow(59, "c" * 40, "LGTM")
    assert all(f.state != "fixed" and f.title == "" for f in decoded.findings)
    kept = {f.severity for f in decoded.findings}
    assert "P0" in kept and "P3" not in kept  # the least severe went first
    small = State(1, "a" * 40, "b" * 40, findings[:3])
    assert decode_state(encode_state(small)) == small  # a state that fits is kept whole


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


def test_the_seed_shaped_change_fits_twelve_kilobytes_with_its_marker(example: ExampleRepo) -> None:
    out = run_local_round(Path(example.path), example.base, example.round1, None, None)
    markdown = out.markdown
    assert len(markdown.encode()) <= 12_000
    assert decode_state(markdown) is not None
    # The headline stays whole: the P1 with its evidence, suggestion and folded truth table; no tests ran
    # here, so the rows to pin are in prose and no unexecuted test sketch is offered.
    blocking = _sections(markdown)["Blocking Issues"]
    title = next(line for line in blocking.splitlines() if line.startswith("**F1 · [P1] "))
    assert "`config.need_rope_kv_cache" in title and "`rtp_llm/cpp/config/ModelConfig.cc:" in title
    assert "**changed**" in blocking and "(rope_style=RopeStyle.No" in blocking
    assert "@pytest.mark.parametrize" not in blocking
    zh = run_local_round(Path(example.path), example.base, example.round1, None, None, lang="zh").markdown
    assert len(zh.encode()) <= 12_000 and "阻塞项" in zh
    # The KPI block is always there (issue 27), compact: one line per key, valid JSON.
    for text in (markdown, zh):
        kpi = _kpi_block(text)
        assert kpi["new_findings"] == 6 and kpi["blocking"] == 1 and "timings_ms" not in kpi
    assert "KPI" not in markdown.split("\n")[2]  # never among what was left out


def _kpi_block(markdown: str) -> dict[str, object]:
    import json

    block = markdown.split(
        "<summary>KPI</summary>" if "<summary>KPI" in markdown else "<summary>本轮 KPI</summary>"
    )[1]
    body = block.split("```json\n", 1)[1].split("\n```", 1)[0]
    lines = body.splitlines()
    assert lines[0] == "{" and lines[-1] == "}" and all(line.startswith('"') for line in lines[1:-1])
    doc = json.loads(body)
    assert len(lines) == len(doc) + 2  # one line per key
    return doc


def test_the_kpi_block_stays_when_everything_else_is_cut() -> None:
    findings = [_finding(i, Severity.P1 if i < 5 else Severity.P2) for i in range(60)]  # P2: no P3 cap
    kpi = {"coverage": 1.0, "new_findings": 60, "tests": {"ran": 2, "isolation": {"user": "x" * 500}}}
    review = _review(findings, kpi=kpi)
    markdown = _with_marker(review)
    assert len(markdown.encode()) <= BUDGET * 2 and "_Shortened to stay within" in markdown
    doc = _kpi_block(markdown)
    assert doc == {
        "coverage": 1.0,
        "new_findings": 60,
        "tests": {"ran": 2},
    }  # the test run's prose is its own section
    huge = _with_marker(review, budget=2_000, limit=20_000)
    assert _kpi_block(huge)["new_findings"] == 60 and len(huge) <= 20_000


def _forget_templates() -> None:
    loaded = templating._env().cache  # jinja2's in-process cache of loaded templates
    assert loaded is not None
    loaded.clear()


def test_compiled_templates_kept_in_the_cache_directory_render_the_same(tmp_path: Path) -> None:
    review = _review([_finding(i) for i in range(3)])
    plain = render_markdown(review, "en")
    cache_templates(tmp_path)
    try:
        _forget_templates()  # compile again, this time through the bytecode cache
        first = render_markdown(review, "en")
        written = sorted((tmp_path / "templates").iterdir())
        _forget_templates()
        second = render_markdown(review, "en")  # loaded from the files just written
        assert plain == first == second and written and sorted((tmp_path / "templates").iterdir()) == written
    finally:
        cache_templates(None)
        _forget_templates()
