"""Each table's generated test runs in a process of its own (issue 25): a module that one table's test
imports cannot make another table's module import or run. Real git repository, real sandbox, pytest."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from reviewbot.change.diff import load_change
from reviewbot.execution.execute import ExecSettings, executor
from reviewbot.report.render import render_json
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.execution.probe import toml
from tests.gitrepo import Repo

# The first table's module leaves a module behind in sys.modules as it imports; the second table's
# module imports that name, which exists nowhere else. In one shared interpreter the second would
# import (its test collected after the first's); on its own it cannot.
SIDE_EFFECT = """import sys
import types

sys.modules["only_via_a"] = types.ModuleType("only_via_a")
"""
CONFIG = """from dataclasses import dataclass


@dataclass
class {name}:
    cache: bool = False
    use_rope: bool = True

    def __post_init__(self):
        pass
"""
DERIVED = "        if not self.cache:\n            self.use_rope = False\n"


def _tables(tmp_path: Path) -> dict[str, dict[str, Any]]:
    repo = Repo(tmp_path / "repo")
    a_base = SIDE_EFFECT + CONFIG.format(name="AConfig")
    b_base = "import only_via_a  # noqa: F401\n" + CONFIG.format(name="BConfig")
    files = {".reviewbot.toml": toml(f"{sys.executable} -c pass", timeout=120), "pkg/__init__.py": ""}
    base = repo.commit({**files, "pkg/a_config.py": a_base, "pkg/b_config.py": b_base}, "base")
    repo.checkout("pr", create=True)
    changed = {
        p: t.replace("        pass\n", DERIVED)
        for p, t in (("pkg/a_config.py", a_base), ("pkg/b_config.py", b_base))
    }
    head = repo.commit(changed, "head")
    settings = ReviewSettings(execute=executor(repo.path, ExecSettings(time_budget_s=240, max_workers=2)))
    doc = render_json(review_change(load_change(repo.path, base, head), settings))
    return {t["path"]: t for t in doc["executed_tables"]}


def test_a_module_another_tables_test_imports_does_not_make_a_table_run(tmp_path: Path) -> None:
    tables = _tables(tmp_path)
    assert set(tables) == {"pkg/a_config.py", "pkg/b_config.py"}
    a, b = tables["pkg/a_config.py"], tables["pkg/b_config.py"]
    # ruleid: the table whose module imports here runs row for row
    assert a["executed"] is True and a["reason"] == "" and a["agreed"] == len(a["rows"]) > 0
    # ok: the other table's module imports a name only the first one's import provides: not run, and why
    missing = "ModuleNotFoundError: No module named 'only_via_a'"
    assert b["executed"] is False and b["reason"] == f"head: the test did not import: {missing}"
    assert all(
        r["executed"]["head"] == {"outcome": "not_run", "value": f"the test did not import: {missing}"}
        for r in b["rows"]
    )
