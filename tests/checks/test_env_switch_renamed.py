"""env-switch-renamed: environment writes and reads (lang.env), what a parsing does with the values
deployments set (analysis.envs.parse), documentation mentions, and the findings' evidence on the fixture
cases (the reported lines are held by test_fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.analysis.envs.parse import SAMPLES, Outcome, evaluate, same_literal, value_of_default
from reviewbot.lang.common import canonical_expr
from reviewbot.lang.env import doc_mentions, env_sources, env_write, is_doc_path
from reviewbot.model.finding import Finding, Severity
from tests.checks.fixtures import FIXTURES, review_case
from tests.lang.helpers import MemoryTree

RULE = "env-switch-renamed"


def _findings(case: str, tmp_path: Path) -> list[Finding]:
    return [f for f in review_case(FIXTURES / RULE / case, tmp_path / "repo") if f.rule == RULE]


@pytest.mark.parametrize(
    ("statement", "written", "sources"),
    [
        (
            'os.environ["REUSE_CACHE"] = os.environ.get("USE_BLOCK_CACHE")',
            "REUSE_CACHE",
            ("USE_BLOCK_CACHE",),
        ),
        ("os.environ.setdefault('X', '1')", "X", ()),
        ('setenv("NEW", getenv("OLD"), 1)', "NEW", ("OLD",)),
        ('putenv("A=1")', "A", ()),
        ('flag = os.environ["A"] == "1"', None, ("A",)),
        ('x = get_env_bool("USE_X", False) or envs.Y', None, ("USE_X",)),
    ],
)
def test_writes_are_told_apart_from_reads(
    statement: str, written: str | None, sources: tuple[str, ...]
) -> None:
    text = canonical_expr(statement)
    found = env_write(text)
    assert (found[0] if found else None) == written
    assert env_sources(found[1] if found else text) == sources


def test_parsings_on_the_values_deployments_set() -> None:
    def table(parse: str) -> list[str]:
        return [evaluate(parse, s).shown() for s in SAMPLES]

    # SAMPLES: 1, 0, true, false, True, False, yes, no, 2, ""
    assert table('·=="1"') == ["True"] + ["False"] * 9
    assert table("bool(int(·))") == ["True", "False", *["raises"] * 6, "True", "raises"]
    assert table("str_to_bool(·)")[:8] == ["True", "False", "True", "False", "True", "False", "True", "False"]
    assert table("std.stoi(std.string(·))")[2] == "raises"
    assert table('·.lower()in("1","true")')[:4] == ["True", "False", "True", "False"]
    assert evaluate("some_helper(·)", "1").outcome is Outcome.UNKNOWN
    assert evaluate("bool(int(·))", 0).value is False  # a non-string default goes through the parsing too


def test_defaults_that_spell_the_same_value() -> None:
    assert same_literal("1.0", "1.") and same_literal("'x'", '"x"') and same_literal("1e-5", "1e-05")
    assert not same_literal("0", "False") and not same_literal('"0"', "0")
    assert value_of_default("cfg.x").outcome is Outcome.UNKNOWN


def test_documentation_mentions_by_name_and_place() -> None:
    tree = MemoryTree(
        {
            "docs/Config.md": "| `REUSE_CACHE` | reuse |\nset FMHA_ENABLE=OFF or REUSE_CACHE=1\n",
            "README.md": "no switches here: REUSE_CACHE_X is another name\n",
            "third_party/lib/README.md": "REUSE_CACHE\n",
            "src/a.py": "REUSE_CACHE\n",
        }
    )
    found = doc_mentions(tree, ["REUSE_CACHE", "FMHA_ENABLE", "ABSENT"])
    assert [(r.path, r.line) for r in found["REUSE_CACHE"]] == [("docs/Config.md", 1), ("docs/Config.md", 2)]
    assert [(r.path, r.line) for r in found["FMHA_ENABLE"]] == [("docs/Config.md", 2)]
    assert "ABSENT" not in found
    assert is_doc_path("README") and is_doc_path("docs/x.rst") and not is_doc_path("src/readme_utils.py")


def test_a_renamed_cpp_switch_names_its_old_read_and_the_documentation(tmp_path: Path) -> None:
    (f,) = _findings("cpp-renamed", tmp_path)
    assert f.severity is Severity.P1
    assert f.title.startswith("`FMHA_ENABLE` is renamed to `ENABLE_FMHA` without an alias")
    assert f.evidence[0].startswith("Read at base cpp/Attention.cc:5 as `getenv('FMHA_ENABLE')`")
    assert f.evidence[1] == "Still documented at docs/Attention.md:3."
    assert 'getenv("ENABLE_FMHA") ? getenv("ENABLE_FMHA") : getenv("FMHA_ENABLE")' in f.suggestion


def test_a_dropped_alias_names_the_readers_of_the_new_name_that_lost_it(tmp_path: Path) -> None:
    (f,) = _findings("py-alias-dropped", tmp_path)
    assert "`USE_BLOCK_CACHE` → `REUSE_CACHE`" in f.title and "engine/cache.py:7" in f.title
    assert (
        f.evidence[0] == "Readers of `REUSE_CACHE` that no longer see `USE_BLOCK_CACHE`: cpp/Attention.cc:5."
    )
    assert f.evidence[1].startswith('Removed alias `os.environ["REUSE_CACHE"]')
    assert "别名" in f.localized("zh").title


def test_a_stricter_parsing_shows_the_values_that_now_raise(tmp_path: Path) -> None:
    (f,) = _findings("py-parse", tmp_path)
    assert "`REUSE_CACHE=true` now raises" in f.title
    assert f.evidence[0].startswith("Values before → after: `true`: False → raises")


def test_the_old_read_is_shown_with_its_default() -> None:
    from reviewbot.checks.env_switch_renamed import _read
    from reviewbot.lang.parse import parse_file

    facts = parse_file(
        "m.py", 'import os\n\ndef f():\n    return bool(int(os.environ.get("ASYNC_MODE", "1")))\n'
    )
    assert facts is not None
    (read,) = facts.env_reads
    # What an unset variable means is part of the evidence: without "1" the line would say it reads None.
    assert _read(read) == "bool(int(os.environ.get('ASYNC_MODE', \"1\")))"


def test_a_switch_nothing_in_the_repository_names_is_a_note(tmp_path: Path) -> None:
    # Operators set what the docs or tests tell them to; an undocumented knob's rename is P3.
    (f,) = _findings("py-undocumented", tmp_path)
    assert f.severity is Severity.P3
    assert f.title.startswith("`FORCE_BATCHING` is renamed to `PERF_TEST_SCHEDULE`")
    # The documented ones stay P1 (cpp-renamed above; py-renamed's docs/Config.md names it).
    (g,) = _findings("py-renamed", tmp_path / "documented")
    assert g.severity is Severity.P1 and any("docs/Config.md" in e for e in g.evidence)
