"""Many findings: near-identical ones (same rule, field and file) shown once with a count, P3s capped
in the comment, and every finding still in JSON, SARIF and the state marker (issue 27 item 9)."""

from __future__ import annotations

import json

from reviewbot.model.finding import Dismissal, Finding, Severity
from reviewbot.model.review import ChecklistItemResult, ChecklistResult
from reviewbot.report.comment import CAPS
from reviewbot.report.group import fold, group_findings
from reviewbot.report.marker import decode_state
from reviewbot.report.render import render_json, render_sarif
from reviewbot.report.terminal import render_text
from tests.report.test_comment import _review, _with_marker


def _on_field(
    line: int, field: str = "use_fp8", *, rule: str = "unconditional-override", **kw: object
) -> Finding:
    fields: dict[str, object] = {
        "rule": rule,
        "severity": Severity.P2,
        "path": "src/config.py",
        "line": line,
        "title": f"`{field}` is overwritten at line {line}",
        "anchor": f"cfg.{field} = x  # {line}",
        "extra": (("field", field),),
    }
    fields.update(kw)
    return Finding(**fields)  # type: ignore[arg-type]


def test_same_rule_field_and_file_group_others_stay_apart() -> None:
    findings = [
        _on_field(10),
        _on_field(22),
        _on_field(31),
        _on_field(40),
        _on_field(12, "use_bf16"),  # another field
        _on_field(50, rule="default-changed"),  # another rule
        _on_field(60, path="src/other.py"),  # another file
        _on_field(70, extra=()),  # no field: never grouped
        _on_field(71, extra=()),
        _on_field(80, dismissal=Dismissal("known", "me", "2026-01-01T00:00:00Z")),  # dismissed: apart
    ]
    groups = group_findings(findings)
    assert [g.count for g in groups] == [4, 1, 1, 1, 1, 1, 1]
    assert groups[0].first.line == 10 and groups[0].lines() == [22, 31, 40]


def test_the_comment_shows_a_group_once_with_its_count_and_says_how_many_it_folded() -> None:
    findings = [_on_field(line) for line in (10, 22, 31, 40)] + [_on_field(12, "use_bf16")]
    items = [ChecklistItemResult("d", "General", "[6.1] DRY", True, (findings[3].fingerprint,))]
    review = _review(findings, checklist=ChecklistResult(items))
    markdown = _with_marker(review)
    assert markdown.count("is overwritten at line") == 2  # F1 (the group) and F2
    (f1,) = [line for line in markdown.splitlines() if line.startswith("**F1 · ")]
    assert "_(4 like this in this file: also line 22, 31, 40)_" in f1 and "`src/config.py:10`" in f1
    assert "**F3 · " not in markdown
    assert "_Folded: 4 near-identical findings (same rule, field and file) shown as 1. " in markdown
    # A checklist item that names a folded finding points at its group's number.
    assert "- [ ] [6.1] DRY → F1" in markdown
    # Nothing is lost for machines: JSON, SARIF and the state marker hold all five.
    assert len(render_json(review)["findings"]) == 5
    assert len(render_sarif(review)["runs"][0]["results"]) == 5
    state = decode_state(markdown)
    assert state is not None and len(state.findings) == 5


def test_the_comment_caps_p3s_and_json_keeps_them_all() -> None:
    findings = [_on_field(i, f"flag_{i}", severity=Severity.P3) for i in range(1, 31)]
    findings.append(_on_field(100, "use_fp8", severity=Severity.P1))
    review = _review(findings)
    markdown = _with_marker(review)
    assert "**F1 · [P1] " in markdown
    p3_titles = [line for line in markdown.splitlines() if line.startswith("**F") and "[P3]" in line]
    assert len(p3_titles) == CAPS.p3 == 10
    assert f"_Folded: {30 - CAPS.p3} more P3 findings not shown (at most {CAPS.p3} are). " in markdown
    assert "The JSON report and SARIF have every finding._" in markdown
    assert "**Summary:** P0/0 · P1/1 · P2/0 · P3/30" in markdown  # the summary counts all of them
    doc = json.loads(json.dumps(render_json(review)))
    assert len(doc["findings"]) == 31


def test_fold_counts_groups_once_against_the_cap() -> None:
    findings = [_on_field(i, severity=Severity.P3) for i in range(1, 6)]  # one group of five
    findings += [_on_field(i, f"f{i}", severity=Severity.P3) for i in range(10, 25)]  # fifteen alone
    folded = fold(findings, max_p3=10)
    assert [g.count for g in folded.shown] == [5] + [1] * 9
    assert folded.capped_findings == 6 and folded.grouped == 4 and folded.groups == 1


def test_the_terminal_shows_a_group_as_one_line_with_a_count() -> None:
    findings = [_on_field(line) for line in (10, 22, 31, 40)] + [_on_field(12, "use_bf16")]
    text = render_text(_review(findings))
    lines = text.splitlines()
    assert lines[0] == (
        "src/config.py:10: [P2] unconditional-override: `use_fp8` is overwritten at line 10 "
        "(×4: also line 22, 31, 40)"
    )
    assert lines[1].startswith("src/config.py:12: [P2] unconditional-override: `use_bf16`")
    assert len(lines) == 3
    assert "5 finding(s)" in lines[2] and "4 near-identical finding(s) shown as 1 line(s)" in lines[2]
