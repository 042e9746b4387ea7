"""Suggestions are written for the language and the predicate at hand, not copied from the seed."""

from __future__ import annotations

from pathlib import Path

from tests.checks.fixtures import FIXTURES, review_case


def test_duplicated_predicate_names_the_local_in_the_files_language(tmp_path: Path) -> None:
    py = review_case(FIXTURES / "duplicated-predicate" / "py-cross-language", tmp_path / "py")
    (finding,) = [f for f in py if f.rule == "duplicated-predicate"]
    assert "const bool" not in finding.suggestion
    assert "`not_use_kvcache_and_style_is_no = " in finding.suggestion

    cpp = review_case(FIXTURES / "duplicated-predicate" / "cpp-same-function", tmp_path / "cpp")
    (finding,) = [f for f in cpp if f.rule == "duplicated-predicate"]
    assert "`const bool not_use_kvcache_and_style_is_no = !use_kvcache && " in finding.suggestion
