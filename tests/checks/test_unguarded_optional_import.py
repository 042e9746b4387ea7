"""unguarded-optional-import: the lines are checked by test_fixtures; here, what the finding says."""

from __future__ import annotations

from pathlib import Path

from reviewbot.analysis.optional_imports import own_packages
from reviewbot.model.finding import Severity
from tests.checks.fixtures import FIXTURES, review_case

RULE = "unguarded-optional-import"


def test_the_finding_names_the_parent_the_setting_and_the_line_as_written(tmp_path: Path) -> None:
    found = [f for f in review_case(FIXTURES / RULE / "py-find-spec", tmp_path / "repo") if f.rule == RULE]
    mooncake, deep_ep = sorted((f for f in found if f.path == "pkg/server_args.py"), key=lambda f: f.line)
    assert (mooncake.severity, mooncake.path, mooncake.line) == (Severity.P1, "pkg/server_args.py", 19)
    assert mooncake.title.startswith(
        '`find_spec("mooncake.engine")` in `ServerArgs.__post_init__` imports `mooncake` first'
    )
    assert dict(mooncake.extra)["field"] == "support_transfer_engine"  # the setting the probe decides
    assert mooncake.evidence[0].startswith(
        'As written: `if importlib.util.find_spec("mooncake.engine") is None:`'
    )
    assert 'find_spec("mooncake") is None or find_spec("mooncake.engine") is None' in str(mooncake.suggestion)
    assert dict(deep_ep.extra)["module"] == "deep_ep.buffer"
    assert "ModuleNotFoundError" in mooncake.localized("zh").title


def test_own_packages_are_the_top_level_ones() -> None:
    paths = [
        "python/sglang/__init__.py",
        "python/sglang/srt/__init__.py",
        "python/sglang/srt/disaggregation/mooncake/__init__.py",
        "setup.py",
        "tools/__init__.py",
    ]
    assert own_packages(paths) == frozenset({"sglang", "tools"})


def test_a_script_beside_the_package_is_a_nit(tmp_path: Path) -> None:
    found = [f for f in review_case(FIXTURES / RULE / "py-find-spec", tmp_path / "repo") if f.rule == RULE]
    [script] = [f for f in found if f.path == "benchmarks/compare.py"]
    assert script.severity is Severity.P3 and script.line == 5


def test_spellings_and_guards_of_the_probe() -> None:
    # Module aliases are probes too; `except* ImportError` guards; a relative name is the project's own.
    import ast

    from reviewbot.analysis.optional_imports import _find_spec_aliases, _Finder

    tree = ast.parse(
        "import importlib.util as iu\n"
        "from importlib import util as u\n"
        "def f():\n"
        "    a = iu.find_spec('c.d'), u.find_spec('d.e')\n"
        "    try:\n"
        "        iu.find_spec('f.g')\n"
        "    except* ImportError:\n"
        "        pass\n"
        "    return iu.find_spec('.sub.mod', __package__)\n"
    )
    finder = _Finder(_find_spec_aliases(tree))
    finder.visit(tree)
    assert [name for _, name, _ in finder.found] == ["c.d", "d.e"]


def test_a_probe_in_a_decorator_belongs_to_the_enclosing_scope() -> None:
    # The decorator runs where `fused` is defined, at import time: not "in `fused`".
    import ast

    from reviewbot.analysis.optional_imports import _find_spec_aliases, _Finder

    tree = ast.parse(
        "import importlib.util\n"
        "def gate(ok):\n"
        "    return lambda f: f\n"
        "class Norm:\n"
        "    @gate(importlib.util.find_spec('apex.normalization') is not None)\n"
        "    def fused(self, x=importlib.util.find_spec('apex.contrib')):\n"
        "        return importlib.util.find_spec('apex.mlp')\n"
        "    def cleanup(self):\n"
        "        from contextlib import suppress\n"
        "        with suppress(ModuleNotFoundError):\n"
        "            importlib.util.find_spec('apex.transformer')\n"
    )
    finder = _Finder(_find_spec_aliases(tree))
    finder.visit(tree)
    assert [(name, where) for _, name, where in finder.found] == [
        ("apex.normalization", "Norm"),
        ("apex.contrib", "Norm"),
        ("apex.mlp", "Norm.fused"),
    ]
