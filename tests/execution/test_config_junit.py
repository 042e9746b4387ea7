"""`[tests]` configuration and JUnit parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.errors import UsageError
from reviewbot.execution.config import parse_test_config
from reviewbot.execution.config import test_config_from_table as config_from_table
from reviewbot.execution.junit import TestCase, belongs_to, parse_junit


def test_tests_table_is_validated_at_load() -> None:
    cfg = parse_test_config('[tests]\ncommand = "make test"\ntimeout = 5\njunit = "out/*.xml"\n')
    assert cfg is not None and (cfg.command, cfg.timeout, cfg.junit, cfg.junit_configured) == (
        "make test",
        5.0,
        "out/*.xml",
        True,
    )
    assert parse_test_config(None) is None and parse_test_config("[review]\n") is None
    assert config_from_table({}) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tests\n", "not valid TOML"),
        ("[tests]\ntimeout = 3\n", "needs `command"),
        ('[tests]\ncommand = "x"\ntimeout = 0\n', "positive number"),
        ('[tests]\ncommand = "x"\ntimeout = true\n', "positive number"),
        ('[tests]\ncommand = "x"\njunit = "/etc/*.xml"\n', "relative glob"),
        ('[tests]\ncommand = "x"\nshell = "bash"\n', "unknown key(s) in [tests]: shell"),
    ],
)
def test_bad_tests_table_says_what_to_fix(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=None) as info:
        parse_test_config(text)
    assert message in str(info.value)


def test_junit_outcomes_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(
        '<testsuites><testsuite name="s">'
        '<testcase classname="pkg.test_m" name="test_ok"/>'
        '<testcase classname="pkg.test_m" name="test_bad"><failure message="x"/></testcase>'
        '<testcase classname="pkg.test_m" name="test_err"><error message="x"/></testcase>'
        '<testcase classname="pkg.test_m" name="test_skip"><skipped/></testcase>'
        "</testsuite></testsuites>"
    )
    # The same test reported again as passed (a rerun) stays failed.
    (tmp_path / "b.xml").write_text(
        '<testsuite><testcase classname="pkg.test_m" name="test_bad"/></testsuite>'
    )
    (tmp_path / "c.xml").write_text("<not-junit/>")
    (tmp_path / "d.xml").write_text("<testsuite><testcase")
    cases, problems = parse_junit(sorted(tmp_path.glob("*.xml")))
    assert {i: c.outcome for i, c in cases.items()} == {
        "pkg.test_m::test_ok": "passed",
        "pkg.test_m::test_bad": "failed",
        "pkg.test_m::test_err": "error",
        "pkg.test_m::test_skip": "skipped",
    }
    assert len(problems) == 1 and problems[0].startswith("d.xml")


def test_test_cases_map_to_their_files() -> None:
    pytest_case = TestCase("a.b.test_m::test_x", "passed", "a.b.test_m", "test_x")
    prefixed = TestCase("repo.a.b.test_m.TestK::test_x", "passed", "repo.a.b.test_m.TestK", "test_x")
    gtest = TestCase("cpp::cfg_test", "passed", "cpp", "cfg_test", file="./x/test/cfg_test.cc")
    assert belongs_to(pytest_case, "a/b/test_m.py") and belongs_to(prefixed, "a/b/test_m.py")
    assert not belongs_to(pytest_case, "a/b/test_m2.py") and not belongs_to(pytest_case, "a/c/test_m.py")
    # pytest's rootdir in a sub-directory (its own pytest.ini): the classname lacks the leading `py/`.
    assert belongs_to(pytest_case, "py/a/b/test_m.py")
    assert not belongs_to(pytest_case, "a.py") and not belongs_to(prefixed, "a/b.py")
    assert belongs_to(gtest, "x/test/cfg_test.cc") and not belongs_to(gtest, "y/test/cfg_test.cc")
