"""stale-comment: the comment's place and the word it still names (lines: test_fixtures)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.analysis.stale_comments import _looks_like_code
from reviewbot.model.finding import Severity
from tests.checks.fixtures import FIXTURES, review_case

RULE = "stale-comment"


def test_a_comment_naming_a_dropped_call_or_an_old_value(tmp_path: Path) -> None:
    found = {
        f.line: f
        for f in review_case(FIXTURES / RULE / "py-gcd-and-default", tmp_path / "r")
        if f.rule == RULE
    }
    assert sorted(found) == [7, 10]
    assert found[7].severity is Severity.P3
    assert (
        found[7].title
        == "The comment at config/heads.py:5 still names `gcd`, which the changed code no longer uses."
    )
    assert found[10].title == "The comment at config/heads.py:8 still says `8`, but the code now uses `16`."
    assert found[7].evidence[1] == "Base code: `kv = math.gcd(head_num, tp_size)`."


def test_commented_out_code_is_not_a_description() -> None:
    assert _looks_like_code("sequence_lengths = torch.ones_like(input_lengths)")
    assert _looks_like_code("free(buffer);")
    assert not _looks_like_code("kv heads per rank: gcd of the head count and the TP size")
